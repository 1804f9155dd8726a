import COpenSSL
import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import ParlorRooms

/// The JSON body of one webhook and its signature.
struct WebhookPayload: Sendable {
    let event: String
    let roomID: String
    let body: [UInt8]

    init(_ notice: RoomNotice, deliveryID: String, at milliseconds: Int64) {
        var object: JSONObject = [
            "id": .string(deliveryID),
            "created_at": .string(Timestamp.iso8601(milliseconds: milliseconds)),
        ]
        switch notice {
        case .roomStarted(let room):
            event = "room_started"
            object["room"] = room.json
        case .roomFinished(let room, let reason):
            event = "room_finished"
            object["room"] = room.json
            object["reason"] = .string(reason)
        case .memberJoined(let room, let member, let eventID):
            event = "member_joined"
            object["room"] = room.json
            object["member"] = member.json
            object["room_event_id"] = JSONValue(eventID)
        case .memberLeft(let room, let member, let reason, let eventID):
            event = "member_left"
            object["room"] = room.json
            object["member"] = member.json
            object["reason"] = .string(reason.rawValue)
            object["room_event_id"] = JSONValue(eventID)
        case .roomEvent(let room, let roomEvent):
            // member:hand → member_hand, like the other webhook names.
            event = roomEvent.type.split(separator: ":").joined(separator: "_")
            object["room"] = room.json
            object["room_event_id"] = JSONValue(roomEvent.id)
            object["body"] = roomEvent.body
        case .recording(let notice, let room, let recording):
            event = notice.rawValue
            object["room"] = room.json
            object["recording"] = recording
        }
        object["event"] = .string(event)
        roomID = notice.roomID
        body = JSONValue.object(object).encoded()
    }

    /// `sha256=<hex HMAC-SHA256 of the body>`, sent as X-Parlor-Signature so receivers can check the sender.
    static func signature(of body: [UInt8], secret: [UInt8]) -> String {
        "sha256=" + Hex.encode(hmacSHA256(body, key: secret))
    }
}
