import ParlorBasics

/// Behaviour of live rooms.
public struct RoomsConfiguration: Sendable {
    /// How long a member whose connections all dropped keeps its membership before `member:left` reason `dropped`.
    public var gracePeriod = TimeSpan.seconds(20)
    /// With several nodes on one database: how long a node's lease lasts after its last heartbeat (one every third
    /// of it). A node silent for longer is taken over: its members are away from then, and drop after the grace period.
    public var nodeLease = TimeSpan.seconds(15)
    /// With several nodes: how long a media:offer relayed to the room's media home waits for its answer.
    public var mediaRelayTimeout = TimeSpan.seconds(10)
    /// With several nodes and media links between them (--cluster-media-address): each node answers its own
    /// connections' offers and the speakers cross the links (issue 41); the media home then only places recordings.
    public var mediaLinks = false
    /// At most one rooms transaction starts per window; commands arriving meanwhile wait for its end and share the
    /// next one (group commit). Under load that saves a commit, its WAL frames and a wake-up of each loop per
    /// command for up to this much latency; a command after a quiet window is applied at once. Zero: no wait.
    public var commitWindow = TimeSpan.milliseconds(1)
    /// Seconds an empty room is kept when it does not say (the tutorial's 300).
    public var defaultRoomTTL: Int64 = 300
    public var defaultPageSize = 100
    public var maxPageSize = 1000
    /// Events replayed on session:resume per room at most; a client further behind is told to rejoin.
    public var maxReplayEvents = 10_000
    /// Events kept per room: past it the oldest are deleted as new ones come (the newest are always kept).
    public var maxRoomEvents = 100_000
    /// A resume's replay is read and sent a page at a time, each at most this many bytes of frames, the next once
    /// the connection has drained it (ReplayPacer.swift).
    public var replayPageBytes = 64 * 1024
    /// Bytes of replay pages held at once across all connections; over it, a replay waits for others to drain.
    public var replayBudgetBytes = 64 * 1024 * 1024
    /// A connection that does not read a replay page within this time is closed (1008, slow consumer).
    public var replayStallTimeout = TimeSpan.seconds(30)

    /// Members of one room that may send audio at once: a mesh costs every sender n-1 uplinks, so past a handful
    /// of senders a browser's upload and CPU give out. Members beyond it join as listeners.
    public var maxAudioSenders = 8
    /// How audio flows: through the server's forwarding unit (`--media sfu`) or browser to browser (`mesh`).
    public var mediaMode = MediaMode.sfu
    /// Receive slots per client peer connection in SFU mode: at most this many speakers reach one client at once.
    public var maxForwardedSpeakers = 8
    /// Live media sessions (one per connection per room) one user may have, and one client address (an IPv6 /64)
    /// may have whoever the users; 0: no limit. Each costs memory on the media port until it ends.
    public var maxMediaSessionsPerUser = 20
    public var maxMediaSessionsPerAddress = 200
    /// A media session that has not completed ICE (no address answered the server's check) by then is ended.
    public var mediaSetupTimeout: TimeSpan = .seconds(10)
    /// media:offer per connection: `mediaOfferRate` a second, bursts of `mediaOfferBurst`; per user twice both.
    /// Each offer costs the rooms thread about half a millisecond. 0: no limit.
    public var mediaOfferRate = 2.0
    public var mediaOfferBurst = 5
    /// STUN/TURN servers handed to clients in session:success; none is needed on a LAN.
    public var iceServers: [ICEServer] = []
    /// Time-limited TURN credentials (coturn's shared secret), fresh in every session:success and session:resume.
    public var turn: TURNCredentials?

    /// Abuse limits: open rooms one user may have created, open rooms in all, members in one room.
    public var maxRoomsPerUser = 50
    /// Open rooms created from one client address (an IPv6 /64), whoever the creators: in open mode a client can
    /// mint any number of names, so only this stops one client from filling the server. 0: no limit.
    public var maxRoomsPerAddress = 20
    /// Largest `properties.ttl` a room may ask for (seconds an empty room is kept); rooms stored with more are cut
    /// back to it at start.
    public var maxRoomTTL: Int64 = 86_400
    public var maxOpenRooms = 10_000
    public var maxMembersPerRoom = 1_000
    /// Members of one stage room: its audience may be larger than an open room, since past `fullPresenceLimit` its
    /// listeners' joins and leaves are summarised (issue 37).
    public var maxAudience = 10_000
    /// Joined members above which a stage room switches to summary presence (back to full below 90 % of it).
    public var fullPresenceLimit = 200
    /// How often, at most, a summary-mode room sends its listeners' joins and leaves as one room:audience.
    public var audienceUpdateInterval = TimeSpan.seconds(1)
    /// Presence events (member:joined, member:left) a session:resume replays at most in a summary-mode room; a gap
    /// with more is `lost` (presence-summarised): a re-join's paged reply is cheaper than replaying them.
    public var maxResumedPresenceEvents = 1_000
    /// Chat messages and reactions per second into one room from one client address (an IPv6 /64), whichever
    /// identities send them: in open mode one client can mint any number of names, each within its own rates.
    /// 0: no limit.
    public var messagesPerAddressPerSecond = 5
    public var reactionsPerAddressPerSecond = 10
    /// Members of one room joined from one client address; 0 (the default): no limit, since a town hall behind one
    /// office NAT must still fill.
    public var maxMembersPerAddress = 0
    /// Who may read a room's members and history (REST and WebSocket).
    public var visibility = RoomVisibility.public

    /// Recordings (issue 38): each in `<recordingsDirectory>/<recording_id>` (--recordings-dir).
    public var recordingsDirectory = "./data/recordings"
    /// --max-recording-hours: a recording stops by itself after this long (nil: no limit).
    public var maxRecordingDuration: Duration?
    /// --recordings-access: who may list and download a room's recordings besides admins.
    public var recordingsAccess = RecordingsAccess.moderators
    /// --recording-retention: days a finished recording is kept (0: kept until deleted).
    public var recordingRetentionDays = 0
    public init() {}
}

/// How audio flows between the members of a room.
public enum MediaMode: String, Sendable, CaseIterable {
    /// Every client sends to the server once; the server forwards to the others (issue 12).
    case sfu
    /// Browser to browser; the server relays the signalling (rtc:*).
    case mesh
}

/// Who may read a room's member list and event history.
public enum RoomVisibility: String, Sendable, CaseIterable {
    /// Anyone who may use the server (on an open LAN: anyone who can reach it).
    case `public`
    /// Only users who are or were members of the room.
    case members
}

/// Application close codes (RFC 6455 leaves 4000–4999 to applications), so a client can tell a token problem,
/// which a retry with the same token cannot fix, from a network one.
public enum ParlorCloseCode {
    /// The session's token expired: get a new token, reconnect and resume.
    public static let tokenExpired: UInt16 = 4001
    /// The user's tokens were revoked.
    public static let tokenRevoked: UInt16 = 4003
    /// An admin reset the server (test mode, POST /admin/reset): every session and room is gone; start over.
    public static let serverReset: UInt16 = 4004
    /// Another connection resumed this connection's session: the session is there now (one live resume per session).
    public static let sessionTakenOver: UInt16 = 4005
}

/// One entry of RTCConfiguration.iceServers.
public struct ICEServer: Sendable, Equatable {
    public var urls: [String]
    public var username: String?
    public var credential: String?

    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }
}
