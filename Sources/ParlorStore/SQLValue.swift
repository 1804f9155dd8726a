/// A value either database stores or binds: one case per SQLite storage class (PostgreSQL's typed results map onto them).
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

// Conveniences for binding Swift values: `try db.run("… WHERE id = ?", [.init(roomID)])`.
extension SQLValue {
    public init(_ value: String?) { self = value.map(SQLValue.text) ?? .null }
    public init(_ value: Int64?) { self = value.map(SQLValue.integer) ?? .null }
    public init(_ value: Int?) { self = value.map { .integer(Int64($0)) } ?? .null }
    public init(_ value: Double?) { self = value.map(SQLValue.real) ?? .null }
    /// SQLite has no boolean type: `true` is stored as 1 and `false` as 0.
    public init(_ value: Bool?) { self = value.map { .integer($0 ? 1 : 0) } ?? .null }
}

// Reading values back; each is `nil` for NULL and for a storage class that does not convert.
extension SQLValue {
    public var isNull: Bool { self == .null }

    /// An INTEGER, or a REAL that holds a whole number.
    public var intValue: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// A REAL, or an INTEGER widened to Double.
    public var doubleValue: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    /// TEXT only: numbers are not formatted into strings behind the caller's back.
    public var stringValue: String? {
        if case .text(let value) = self { value } else { nil }
    }

    /// An INTEGER read as a flag: 0 is `false`, anything else `true`.
    public var boolValue: Bool? {
        if case .integer(let value) = self { value != 0 } else { nil }
    }

    public var bytesValue: [UInt8]? {
        if case .blob(let value) = self { value } else { nil }
    }
}

// Literals keep parameter lists short: `["RM-1", 300, nil]`.
extension SQLValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}
