import ParlorProtocol

extension ProtocolMessage {
    /// A refusal by the rooms domain, as the `error` reply to a request of `requestType`.
    public static func error(tid: JSONValue, _ error: RoomError, requestType: RequestType? = nil) -> [UInt8] {
        self.error(tid: tid, code: error.code, detail: error.detail, requestType: requestType?.rawValue)
    }

    /// A stored room event, as every receiver gets it: the bytes of `message(event.json)`, written field by field,
    /// with the body the store encoded spliced in when the record has it (built once per event, sent to every
    /// member).
    public static func event(_ event: EventRecord) -> [UInt8] {
        var message = JSONObjectWriter(reservingCapacity: (event.encodedBody?.count ?? 256) + 192)
        message.field("type", string: event.type)
        message.field("cid", string: event.roomID)
        message.field("id", integer: event.id)
        message.field("from", string: event.from)
        message.field("timestamp", string: Timestamp.iso8601(milliseconds: event.createdAt))
        if let encodedBody = event.encodedBody {
            message.field("body", encoded: encodedBody)
        } else {
            message.field("body", event.body)
        }
        return message.finish()
    }
}
