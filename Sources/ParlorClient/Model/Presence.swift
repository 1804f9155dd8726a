import Foundation

/// How a stage room announces its members (issue 37): every join and leave to everyone (`full`), or, past the
/// server's `--full-presence-limit`, the stage in full and the audience (listeners) as a count and a sample
/// (`summary`). Open rooms are always `full`.
public enum PresenceMode: String, Sendable, Hashable {
    case full
    case summary
}

/// `room:presence`: a stage room switched mode. Not stored (no event id). After a switch to `summary` your member
/// list holds the room as of `lastEventID` and listeners' changes come as `AudienceUpdate`s from then on; after a
/// switch back to `full`, read the whole list again (`ParlorSession.members(in:)`) to have every listener.
public struct PresenceChange: Sendable, Hashable {
    public let mode: PresenceMode
    /// Joined members of the room at the switch.
    public let count: Int
    /// Every event up to this id is accounted for.
    public let lastEventID: Int64

    init?(body: JSONValue) {
        guard let mode = body["mode"]?.stringValue.flatMap(PresenceMode.init(rawValue:)), let count = body["count"]?.integerValue,
              let last = body["last_event_id"]?.integerValue else { return nil }
        self.mode = mode
        self.count = Int(count)
        lastEventID = last
    }
}

/// `room:audience`: in a summary-mode stage room, the listeners who came and went since the last one (at most one
/// per `--audience-update-interval`), coalesced: one who joined and left in between is in neither list. Not stored.
public struct AudienceUpdate: Sendable, Hashable {
    /// A listener who joined: enough to show a face.
    public struct Face: Sendable, Hashable {
        public let memberID: String
        public let user: ParlorUser
    }

    /// Joined listeners now (raised hands included).
    public let count: Int
    /// Up to a dozen who joined, oldest first; `joinedMore` more did too.
    public let joined: [Face]
    /// Up to a dozen member ids who left; `leftMore` more did too.
    public let left: [String]
    public let joinedMore: Int
    public let leftMore: Int
    /// Every event up to this id is accounted for (delivered before, or summarised here).
    public let lastEventID: Int64

    init?(body: JSONValue) {
        guard let count = body["count"]?.integerValue, let joined = body["joined"]?.arrayValue, let left = body["left"]?.arrayValue,
              let last = body["last_event_id"]?.integerValue else { return nil }
        self.count = Int(count)
        self.joined = joined.compactMap { face in
            guard let memberID = face["member_id"]?.stringValue, let user = try? ParlorUser(json: face["user"] ?? .null, "audience face")
            else { return nil }
            return Face(memberID: memberID, user: user)
        }
        self.left = left.compactMap(\.stringValue)
        joinedMore = Int(body["joined_more"]?.integerValue ?? 0)
        leftMore = Int(body["left_more"]?.integerValue ?? 0)
        lastEventID = last
    }
}
