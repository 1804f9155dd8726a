import Foundation

/// Stage rooms: hands, roles and moderation, chat and reactions (docs/protocol.md, "Stage rooms"). Moderator
/// actions by a member who is not one throw `member:error:not-allowed`.
extension ParlorSession {
    /// member:hand:raise: your hand goes up (queued in the order raised; a second raise changes nothing).
    public func raiseHand(_ roomID: String) async throws(ParlorError) {
        _ = try await request(.memberHandRaise, ["cid": .string(roomID)])
    }

    /// member:hand:lower: your own hand, or (moderators) member `memberID`'s.
    public func lowerHand(_ roomID: String, member memberID: String? = nil) async throws(ParlorError) {
        var body: [String: JSONValue] = ["cid": .string(roomID)]
        if let memberID { body["member_id"] = .string(memberID) }
        _ = try await request(.memberHandLower, body)
    }

    /// member:role (moderators): promoting lowers the member's hand; demoting to listener turns its audio off.
    /// Throws `media:error:too-many-senders` when a stage room already has its speakers.
    public func setRole(_ role: MemberRole, of memberID: String, in roomID: String) async throws(ParlorError) {
        _ = try await request(.memberRole, ["cid": .string(roomID), "member_id": .string(memberID), "role": .string(role.rawValue)])
    }

    /// member:ban (moderators): the user's member leaves (reason "kicked") and its joins are refused for `seconds`.
    /// Returns when the ban ends.
    @discardableResult
    public func ban(userID: String, from roomID: String, seconds: Int) async throws(ParlorError) -> Date? {
        let reply = try await request(.memberBan, ["cid": .string(roomID), "user_id": .string(userID), "seconds": JSONValue(seconds)])
        return reply["until"]?.stringValue.flatMap(ISO8601.parse)
    }

    /// room:mute-all (moderators): mutes every other member sending audio; returns how many.
    @discardableResult
    public func muteAll(_ roomID: String) async throws(ParlorError) -> Int {
        Int(try await request(.roomMuteAll, ["cid": .string(roomID)])["muted"]?.integerValue ?? 0)
    }

    /// room:lock (moderators): new users' joins get `room:error:locked`; members who drop may still resume.
    public func lock(_ roomID: String) async throws(ParlorError) {
        _ = try await request(.roomLock, ["cid": .string(roomID)])
    }

    public func unlock(_ roomID: String) async throws(ParlorError) {
        _ = try await request(.roomUnlock, ["cid": .string(roomID)])
    }

    /// room:record:start (a stage room's moderators, an open room's creator): everyone gets `room:recording`;
    /// returns the recording's id. `room:error:recording-active` while one runs.
    public func startRecording(_ roomID: String) async throws(ParlorError) -> String {
        let reply = try await request(.roomRecordStart, ["cid": .string(roomID)])
        guard let id = reply["recording_id"]?.stringValue else { throw ParlorError.invalidResponse("room:record:start without recording_id") }
        return id
    }

    /// room:record:stop: the room's recording (or the one named) stops; `room:error:not-recording` if none runs.
    public func stopRecording(_ roomID: String, recordingID: String? = nil) async throws(ParlorError) {
        var body: [String: JSONValue] = ["cid": .string(roomID)]
        if let recordingID { body["recording_id"] = .string(recordingID) }
        _ = try await request(.roomRecordStop, body)
    }

    /// room:stream:public (those who may record the room): its live stream open to anyone with the link, or
    /// (false) to members only; everyone gets `room:stream`. Returns the stream as it now is.
    @discardableResult
    public func setStreamPublic(_ isPublic: Bool, in roomID: String) async throws(ParlorError) -> LiveStreamStatus {
        let reply = try await request(.roomStreamPublic, ["cid": .string(roomID), "public": .bool(isPublic)])
        guard let status = LiveStreamStatus(reply) else { throw ParlorError.invalidResponse("room:stream:public without public and listeners") }
        return status
    }

    /// message:send: a chat message (1–2,000 characters, 5 per 10 s); returns its event id.
    @discardableResult
    public func send(message text: String, in roomID: String) async throws(ParlorError) -> Int64 {
        try await request(.messageSend, ["cid": .string(roomID), "text": .string(text)])["id"]?.integerValue ?? 0
    }

    /// reaction:send: one emoji, to everyone in the room now (not stored; 10 per 10 s).
    public func react(_ emoji: String, in roomID: String) async throws(ParlorError) {
        _ = try await request(.reactionSend, ["cid": .string(roomID), "emoji": .string(emoji)])
    }

    /// Every joined member whose hand is up, in the order they raised it: `raisedHands(in:pageSize:cursor:)` read
    /// page by page to the end.
    public func allRaisedHands(in roomID: String) async throws(ParlorError) -> [Member] {
        var hands: [Member] = []
        var cursor: String?
        repeat {
            let page = try await raisedHands(in: roomID, cursor: cursor)
            hands += page.members
            cursor = page.cursor
        } while cursor != nil
        return hands
    }

    /// conversation:members with `hands`: one page of the joined members whose hand is up, in the order they raised
    /// it (`cursor` for the next; `allRaisedHands(in:)` reads them all).
    public func raisedHands(in roomID: String, pageSize: Int? = nil, cursor: String? = nil) async throws(ParlorError) -> MembersPage {
        var body: [String: JSONValue] = ["cid": .string(roomID), "hands": .bool(true)]
        if let pageSize { body["page_size"] = JSONValue(pageSize) }
        if let cursor { body["cursor"] = .string(cursor) }
        return try MembersPage(json: try await request(.conversationMembers, body))
    }
}
