/// One result row: values by position or by column name.
public struct Row: Sendable {
    /// Shared by every row of one result, so each row only stores its values.
    let columns: ColumnNames
    /// The values in select-list order.
    public let values: [SQLValue]

    init(columns: ColumnNames, values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// Column names as SQLite reports them (the `AS` alias when there is one).
    public var columnNames: [String] { columns.names }

    public var count: Int { values.count }

    public func contains(_ column: String) -> Bool {
        columns.index(of: column) != nil
    }

    public subscript(_ index: Int) -> SQLValue {
        values[index]
    }

    /// The value of `column`. Asking for a column the query did not select is a programming
    /// error and traps, like an out-of-range array index, rather than passing for NULL.
    public subscript(_ column: String) -> SQLValue {
        guard let index = columns.index(of: column) else {
            fatalError("no column \"\(column)\" in row; columns are \(columns.names)")
        }
        return values[index]
    }

    public func int(_ column: String) -> Int64? { self[column].intValue }
    public func string(_ column: String) -> String? { self[column].stringValue }
    public func double(_ column: String) -> Double? { self[column].doubleValue }
    public func bool(_ column: String) -> Bool? { self[column].boolValue }
    public func bytes(_ column: String) -> [UInt8]? { self[column].bytesValue }
}

/// The column names of one result and a name → position index built once for all its rows.
final class ColumnNames: Sendable {
    let names: [String]
    private let positions: [String: Int]

    init(_ names: [String]) {
        self.names = names
        // With duplicate names (`SELECT a.id, b.id`), the first one wins, as in SQLite's own lookups.
        self.positions = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func index(of name: String) -> Int? {
        positions[name]
    }
}

extension Row {
    /// The rows of a result read by another database layer (ParlorPostgres), sharing one column index.
    public static func rows(columnNames: [String], values: [[SQLValue]]) -> [Row] {
        let columns = ColumnNames(columnNames)
        return values.map { Row(columns: columns, values: $0) }
    }
}
