import ParlorCodec

/// Encodes protocol messages to their JSON bytes, the payload of a WebSocket text frame: the rooms domain builds
/// each once and hands the same bytes to every receiver; the delivery layer adds the frame header.
public enum ProtocolMessage {
    /// The `type` of every refusal; its body carries the `ErrorCode`.
    public static let errorType = "error"

    public static func message(_ value: JSONValue) -> [UInt8] { value.encoded() }

    /// `{"type":"T:success","tid":…,"body":…}`
    public static func success(_ type: RequestType, tid: JSONValue, body: JSONValue) -> [UInt8] {
        // Written field by field: a reply per request, and the object of three fields was built only to be encoded.
        var message = JSONObjectWriter()
        message.field("type", string: type.successType)
        message.field("tid", tid)
        message.field("body", body)
        return message.finish()
    }

    /// The same message as `success(_:tid:body:)`, for a body that is already encoded JSON.
    public static func success(_ type: RequestType, tid: JSONValue, encodedBody: [UInt8]) -> [UInt8] {
        // Room for the type, the tid and the body without growing (a grown buffer copies the body again).
        var message = JSONObjectWriter(reservingCapacity: encodedBody.count + 256)
        message.field("type", string: type.successType)
        message.field("tid", tid)
        message.field("body", encoded: encodedBody)
        return message.finish()
    }

    /// `{"type":"error","tid":…,"body":{"code","detail"}}`, with `request_type` when the refused request had a type
    /// (echoed as sent, also when it is not a type this server knows).
    public static func error(tid: JSONValue, code: ErrorCode, detail: String, requestType: String? = nil) -> [UInt8] {
        var body: JSONObject = ["code": .string(code.rawValue), "detail": .string(detail)]
        if let requestType { body["request_type"] = .string(requestType) }
        return message(["type": .string(errorType), "tid": tid, "body": .object(body)])
    }

    /// `{"type":T, …fields}`: a message the server sends unasked (no `tid`), its type first.
    public static func event(_ type: EventType, _ fields: JSONObject) -> [UInt8] {
        var object: JSONObject = ["type": .string(type.rawValue)]
        for (key, value) in fields.pairs { object.appendParsed(key, value) }  // fields never hold "type"
        return message(.object(object))
    }
}
