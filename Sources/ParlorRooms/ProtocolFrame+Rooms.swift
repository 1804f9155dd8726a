import ParlorProtocol

extension ProtocolFrame {
    /// A refusal by the rooms domain, as the `error` reply to a request of `requestType`.
    public static func error(tid: JSONValue, _ error: RoomError, requestType: RequestType? = nil) -> [UInt8] {
        self.error(tid: tid, code: error.code, detail: error.detail, requestType: requestType?.rawValue)
    }

    /// A stored room event, as every receiver gets it.
    public static func event(_ event: EventRecord) -> [UInt8] { message(event.json) }
}
