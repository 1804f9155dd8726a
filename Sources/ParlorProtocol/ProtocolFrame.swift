import ParlorCodec

/// Protocol messages as whole WebSocket text frames (`ProtocolMessage`'s bytes behind a frame header), for what a
/// connection answers itself.
public enum ProtocolFrame {
    /// The `type` of every refusal; its body carries the `ErrorCode`.
    public static let errorType = ProtocolMessage.errorType

    public static func message(_ value: JSONValue) -> [UInt8] {
        WebSocketFrameEncoder.frame(.text, payload: value.encoded())
    }

    /// The text frame of a message already written (by `JSONObjectWriter` or `ProtocolMessage`).
    public static func message(encoded payload: [UInt8]) -> [UInt8] {
        WebSocketFrameEncoder.frame(.text, payload: payload)
    }

    /// `ProtocolMessage.success(_:tid:body:)` as a frame.
    public static func success(_ type: RequestType, tid: JSONValue, body: JSONValue) -> [UInt8] {
        message(encoded: ProtocolMessage.success(type, tid: tid, body: body))
    }

    /// `ProtocolMessage.success(_:tid:encodedBody:)` as a frame.
    public static func success(_ type: RequestType, tid: JSONValue, encodedBody: [UInt8]) -> [UInt8] {
        message(encoded: ProtocolMessage.success(type, tid: tid, encodedBody: encodedBody))
    }

    /// `ProtocolMessage.error` as a frame.
    public static func error(tid: JSONValue, code: ErrorCode, detail: String, requestType: String? = nil) -> [UInt8] {
        message(encoded: ProtocolMessage.error(tid: tid, code: code, detail: detail, requestType: requestType))
    }

    /// `ProtocolMessage.event` as a frame.
    public static func event(_ type: EventType, _ fields: JSONObject) -> [UInt8] {
        message(encoded: ProtocolMessage.event(type, fields))
    }
}
