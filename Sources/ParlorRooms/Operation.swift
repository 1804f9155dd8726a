/// Who asks for an operation that only some may perform.
public enum Requester: Sendable {
    case admin
    case user(User?)
}

/// Operations started over HTTP rather than by a connected member.
public enum Operation: Sendable {
    case createRoom(NewRoom)
    /// Closes a room: every member gets member:left reason room_closed. Its creator or an admin only.
    case closeRoom(roomID: String, by: Requester)
    /// Ends a membership with reason kicked. Admin only (checked by the route).
    case kick(roomID: String, memberID: String)
    /// Mutes a member, as if it had sent audio:mute:on. Admin only.
    case mute(roomID: String, memberID: String)
    /// A moderator action (roles, hands, ban, mute-all, lock) over REST: an admin or the room's creator only.
    case moderate(roomID: String, action: StageAction, by: Requester)
    /// Closes every connection of a member at once, without a close frame, like a network failure. Test mode only.
    case dropConnections(roomID: String, memberID: String)
    /// Ends every membership of these users (member:left reason kicked) and closes their WebSockets with 4003 and
    /// `reason` (their tokens were revoked).
    case disconnectUser(userIDs: Set<String>, reason: String)
    /// Recordings over REST (issue 38): start or stop (an admin, the room's creator or a stage room's moderator),
    /// list a room's, look one up for a download, delete one (RoomsService+Recording.swift checks who asks).
    case startRecording(roomID: String, by: Requester)
    case stopRecording(roomID: String, recordingID: String, by: Requester)
    case listRecordings(roomID: String, by: Requester)
    /// May user `userID` (nil: no token) listen to the room's live stream here? `{}` when so; refused with the
    /// reason otherwise (RoomsService+LiveStream.swift).
    case liveStreamAccess(roomID: String, userID: String?)
    /// The recording's record (`json`) with `directory`, for a download of its files.
    case findRecording(recordingID: String, by: Requester)
    /// Deletes the row; the reply's `directory` is for the caller to remove (off the rooms thread).
    case deleteRecording(recordingID: String, by: Requester)
    /// Deletes finished recordings older than --recording-retention; the reply lists their `directories`.
    case expireRecordings
    /// Deletes every user, room, member, event and session. Test mode only.
    case reset
}
