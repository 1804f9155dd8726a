import ParlorMedia
import ParlorProtocol

extension RoomsService {
    /// What the rooms thread is asked to do: by connections and HTTP operations (through the entry points), by its
    /// own timers and retries, by the media loop and by other nodes. Applied in batches, in order (`drain`).
    enum Command {
        case connect(ClientRef)
        case request(ClientRef, tid: JSONValue, RoomRequest)
        case disconnected(ClientRef)
        /// Close the connection with `code` after the replies already decided for it.
        case closeAfterReplies(ClientRef, code: UInt16, reason: String)
        case operation(Operation, @Sendable (Result<JSONValue, RoomError>) -> Void)
        case dropIfStillAway(roomID: String, memberID: String)
        case closeIfExpired(roomID: String)
        /// A summary-mode room's audience digest is due (RoomContext+Audience.swift).
        case sendAudience(roomID: String)
        /// A presence change that failed to commit, tried again (PresenceRetries.swift).
        case settle(Settlement, attempt: Int)
        /// Deletes sessions that can no longer be resumed (SessionExpiry.swift).
        case expireSessions
        /// Speaking or slots changed on the media loop (MediaSessions.swift).
        case mediaEvent(MediaServerEvent)
        /// Another node changed something, or one died (ClusterSync.swift).
        case cluster(ClusterSignal)
        /// The engine says a recording has ended (RoomsService+Recording.swift).
        case recordingEnded(recordingID: String, reason: String, manifest: [UInt8])
        /// The room's live stream has `count` listeners on this node now (RoomsService+LiveStream.swift).
        case liveListeners(roomID: String, LiveListeners)
        /// The room's throttled room:stream is due.
        case sendStreamStatus(roomID: String)
    }
}
