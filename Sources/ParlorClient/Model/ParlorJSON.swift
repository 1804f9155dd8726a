/// The client's own JSON type before ParlorProtocol: the server and the client now share `JSONValue`.
/// Kept for one release so code written against it still compiles.
@available(*, deprecated, renamed: "JSONValue")
public typealias ParlorJSON = JSONValue

extension JSONValue {
    /// `ParlorJSON.integer(_:)` as it was; JSON has one number type, `.number`.
    @available(*, deprecated, message: "use JSONValue(_:) or .number")
    public static func integer(_ value: Int64) -> JSONValue { JSONValue(value) }

    /// `ParlorJSON.double(_:)` as it was.
    @available(*, deprecated, renamed: "number")
    public static func double(_ value: Double) -> JSONValue { .number(value) }
}
