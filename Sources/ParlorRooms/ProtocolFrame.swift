import ParlorCodec
import ParlorHTTP

/// Encodes protocol messages straight to WebSocket text frames, so a frame is built once and shared by every receiver.
public enum ProtocolFrame {
    public static func message(_ value: JSONValue) -> [UInt8] {
        WebSocketFrameEncoder.frame(.text, payload: value.encoded())
    }

    /// `{"type":"T:success","tid":…,"body":…}`
    public static func success(_ type: String, tid: JSONValue, body: JSONValue) -> [UInt8] {
        message(["type": .string(type + ":success"), "tid": tid, "body": body])
    }

    /// `{"type":"error","tid":…,"body":{"code","detail"}}`
    public static func error(tid: JSONValue, code: String, detail: String, requestType: String? = nil) -> [UInt8] {
        var body: JSONObject = ["code": .string(code), "detail": .string(detail)]
        if let requestType { body["request_type"] = .string(requestType) }
        return message(["type": "error", "tid": tid, "body": .object(body)])
    }

    public static func error(tid: JSONValue, _ error: RoomError, requestType: String? = nil) -> [UInt8] {
        self.error(tid: tid, code: error.code, detail: error.detail, requestType: requestType)
    }

    public static func event(_ event: EventRecord) -> [UInt8] { message(event.json) }
}
