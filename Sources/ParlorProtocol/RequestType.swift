/// Every request a client may send, as its `type` on the wire. A request's success reply has the type
/// `<request>:success` (`successType`); a refusal is an `error` message with an `ErrorCode`.
/// A new request is a case here and a row in docs/protocol.md's "Request types" (`ProtocolVocabularyTests` checks).
public enum RequestType: String, CaseIterable, Sendable {
    case sessionPing = "session:ping"
    case sessionResume = "session:resume"
    case conversationJoin = "conversation:join"
    case conversationLeave = "conversation:leave"
    case conversationMembers = "conversation:members"
    case conversationEvents = "conversation:events"
    case conversationWatch = "conversation:watch"
    case conversationUnwatch = "conversation:unwatch"
    case audioEnable = "audio:enable"
    case audioDisable = "audio:disable"
    case audioMuteOn = "audio:mute:on"
    case audioMuteOff = "audio:mute:off"
    case audioSpeakingOn = "audio:speaking:on"
    case audioSpeakingOff = "audio:speaking:off"
    case rtcOffer = "rtc:offer"
    case rtcAnswer = "rtc:answer"
    case rtcIce = "rtc:ice"
    // The server's forwarding unit (--media sfu): one peer connection per connection and room.
    case mediaOffer = "media:offer"
    case mediaClose = "media:close"
    // Stage rooms: hands, roles and moderation, chat and reactions.
    case memberHandRaise = "member:hand:raise"
    case memberHandLower = "member:hand:lower"
    case memberRole = "member:role"
    case memberBan = "member:ban"
    case roomMuteAll = "room:mute-all"
    case roomLock = "room:lock"
    case roomUnlock = "room:unlock"
    case messageSend = "message:send"
    case reactionSend = "reaction:send"
    // Recordings (issue 38): a stage room's moderators, an open room's creator.
    case roomRecordStart = "room:record:start"
    case roomRecordStop = "room:record:stop"
    // End-to-end encrypted rooms (issue 40): a member's keys, relayed to the room's other members; never stored.
    case e2eeKey = "e2ee:key"
    /// The live stream (issue 38) open to anyone with the link, or to members only.
    case roomStreamPublic = "room:stream:public"

    /// The `type` of the reply when the request succeeded.
    public var successType: String { rawValue + ":success" }
}
