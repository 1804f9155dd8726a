import Foundation

/// A room's live stream as events and join replies show it (issue 38): `room:stream`, and the join reply's `stream`.
/// Clients show how many listen through it, and whether anyone with the link may.
public struct LiveStreamStatus: Sendable, Hashable {
    /// Anyone with the link may listen (room:stream:public), not only the room's members.
    public let isPublic: Bool
    /// How many listen through GET /rooms/{id}/live.ogg now.
    public let listeners: Int

    public init(isPublic: Bool, listeners: Int) {
        self.isPublic = isPublic
        self.listeners = listeners
    }

    init?(_ body: JSONValue?) {
        guard let body, let isPublic = body["public"]?.boolValue, let listeners = body["listeners"]?.integerValue else { return nil }
        self.isPublic = isPublic
        self.listeners = Int(listeners)
    }
}

/// A room's recording as events and join replies show it (issue 38): `room:recording`, and the join reply's
/// `recording` while the room is being recorded. Clients show a "Recording" mark with who started it.
public struct RecordingStatus: Sendable, Hashable {
    public let recordingID: String
    /// Whether it runs (room:recording `on`; always true in a join reply).
    public let on: Bool
    /// The member who started (or stopped) it; nil: an admin, the creator over HTTP, or the server.
    public let by: String?
    /// Why it stopped by itself: "disk-full", "max-duration", "failed", "room-empty", "room-closed", "interrupted";
    /// nil when it was started or stopped by request.
    public let reason: String?
    /// When it started (join replies only).
    public let startedAt: Date?

    init?(event body: JSONValue) {
        guard let id = body["recording_id"]?.stringValue, let on = body["on"]?.boolValue else { return nil }
        recordingID = id
        self.on = on
        by = body["by"]?.stringValue
        reason = body["reason"]?.stringValue
        startedAt = nil
    }

    init?(joinReply value: JSONValue?) {
        guard let value, let id = value["recording_id"]?.stringValue else { return nil }
        recordingID = id
        on = true
        by = value["by"]?.stringValue
        reason = nil
        startedAt = value["started_at"]?.stringValue.flatMap(ISO8601.parse)
    }
}
