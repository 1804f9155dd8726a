/// A live connection to Parlor (the tutorial's `NXMClient` once logged in): join and leave rooms, page through
/// members and history, and receive every room event in order on `events`.
///
/// If the connection drops unexpectedly the session reconnects on its own (see `ReconnectPolicy`), resumes the
/// previous session so other members never see you leave, and continues `events` with what it missed: every
/// event exactly once, in order. Rooms whose membership could not be kept are reported as `lost` on
/// `connectionStates`; join them again. Requests made while reconnecting wait for the outcome; a request whose
/// reply was cut off fails with `client:error:connection-lost` (it may or may not have taken effect).
public actor ParlorSession {
    public enum ConnectionState: Sendable, Hashable {
        /// The first connection is up.
        case connected(sessionID: String)
        /// The connection dropped (`after` says why); attempt n of the policy's maximum is under way.
        case reconnecting(attempt: Int, after: ParlorError)
        /// Reconnected under a new session id. `resumed` rooms carried on without a gap; in `lost` rooms the
        /// membership ended (grace period over, kicked, room closed, too far behind): join them again.
        case resumed(sessionID: String, resumed: [String], lost: [String])
        /// For good: nil after `close()`, else why it gave up. No more events follow.
        case closed(ParlorError?)
    }

    /// A room this connection has joined: its member id and the newest event id it is known to be up to.
    struct JoinedRoom: Sendable {
        var memberID: String
        var lastEventID: Int64
    }

    /// Who this session belongs to.
    public nonisolated let user: ParlorUser
    /// How the server carries audio, from the first `session:success`: "sfu" (its forwarding unit; `mediaSlots`
    /// receive slots per peer connection, the most m-lines after the microphone's a `media:offer` may have) or
    /// "mesh" (browser to browser). nil from a server that does not say.
    public nonisolated let mediaMode: String?
    public nonisolated let mediaSlots: Int?
    /// The server's id for the current connection; it changes with every reconnect (resume always uses the newest).
    public internal(set) var sessionID: String
    public internal(set) var state: ConnectionState
    /// Every room event this session receives, in arrival order: stored events with strictly increasing ids per
    /// room and no duplicates (your own member:joined and member:left included), and transient ones (speaking,
    /// signalling) as they come, from the moment you ask for it. Every access is a new, independent subscriber
    /// (keep the stream you got to read it in order): any number may read at once, and one that stops (a cancelled
    /// wait, a `break`) ends only its own stream, never the session or the others. Events that arrived while nobody
    /// was subscribed go to the next subscriber, so one consumer that starts late still gets everything. Ends when
    /// the session closes.
    public nonisolated var events: AsyncStream<RoomEvent> { eventHub.subscribe() }
    /// Like `events` from the moment you ask, for a part of a program that watches beside the main consumer (the
    /// CLI's `join --play/--record` reads `media:slots` while `join` prints every event): it takes nothing of the
    /// backlog `events` keeps for its next subscriber, and what arrives while only observers listen is still kept.
    public nonisolated var observedEvents: AsyncStream<RoomEvent> { eventHub.subscribe(observing: true) }
    /// Connection changes: the current state first, then every change (`.reconnecting`/`.resumed`), `.closed` last.
    /// Like `events`, every access is a new independent subscriber.
    public nonisolated var connectionStates: AsyncStream<ConnectionState> { stateHub.subscribe() }

    /// Rooms joined through this session and not left or lost since.
    public var joinedRoomIDs: [String] { joined.keys.sorted() }

    var connector: SessionConnector
    /// Fans every event out to the current subscribers of `events`.
    nonisolated let eventHub = EventHub<RoomEvent>()
    nonisolated let stateHub = EventHub<ConnectionState>(replaysLatest: true)
    var transport: WebSocketTransport?
    /// Bumped for every connection; input from an older one is ignored.
    var generation = 0
    var pending: [String: PendingRequest] = [:]
    var tidCounter = 0
    var joined: [String: JoinedRoom] = [:]
    /// The newest event id handed to `events`, per room: anything at or below it is a duplicate.
    var delivered: [String: Int64] = [:]
    var connectionWaiters: [CheckedContinuation<Result<Void, ParlorError>, Never>] = []
    var reconnectTask: Task<Void, Never>?
    var reconnectsPaused = false
    var pauseWaiters: [CheckedContinuation<Void, Never>] = []

    init(connector: SessionConnector, hello: SessionHello) {
        self.connector = connector
        user = hello.user
        mediaMode = hello.mediaMode
        mediaSlots = hello.mediaSlots
        sessionID = hello.sessionID
        state = .connected(sessionID: hello.sessionID)
    }

    static func start(connector: SessionConnector, opened: WebSocketTransport.Opened, hello: SessionHello) async -> ParlorSession {
        let session = ParlorSession(connector: connector, hello: hello)
        await session.begin(opened)
        return session
    }

    private func begin(_ opened: WebSocketTransport.Opened) {
        attach(opened)
        stateHub.yield(state)
    }

    deinit {
        transport?.drop()
        eventHub.finish()
        stateHub.finish()
    }

    // MARK: Rooms

    /// conversation:join: become a member of `roomID` (joining again is harmless and returns the same member).
    /// Throws `room:error:not-found`, `room:error:closed`, `room:error:full`, …
    /// `e2ee`: this client states that it encrypts its audio and chat, which an end-to-end encrypted room requires
    /// (`room:error:encryption-required` without it); only state it if the app really does (docs/e2ee.md).
    public func join(_ roomID: String, e2ee: Bool = false) async throws(ParlorError) -> Membership {
        var body: [String: JSONValue] = ["cid": .string(roomID)]
        if e2ee { body["e2ee"] = .bool(true) }
        let membership = try Membership(json: try await request(.conversationJoin, body))
        let known = joined[membership.roomID]?.lastEventID ?? 0
        joined[membership.roomID] = JoinedRoom(memberID: membership.memberID, lastEventID: max(known, membership.lastEventID))
        return membership
    }

    /// conversation:leave: everyone, you included, gets member:left with reason "left".
    public func leave(_ roomID: String) async throws(ParlorError) {
        _ = try await request(.conversationLeave, ["cid": .string(roomID)])
        joined[roomID] = nil
    }

    /// conversation:members: one page of the room's memberships (`pageSize` nil: the server's default).
    /// `role`: only joined members with that role, in join order (a summary-mode room's audience pages with
    /// `.listener` from the join reply's `audienceCursor`).
    public func members(in roomID: String, pageSize: Int? = nil, cursor: String? = nil,
                        order: MembersPage.Order = .ascending, state: MembersPage.StateFilter = .joined,
                        role: MemberRole? = nil) async throws(ParlorError) -> MembersPage {
        var body: [String: JSONValue] = ["cid": .string(roomID), "order": .string(order.rawValue), "state": .string(state.rawValue)]
        if let role { body["role"] = .string(role.rawValue) }
        if let pageSize { body["page_size"] = JSONValue(pageSize) }
        if let cursor { body["cursor"] = .string(cursor) }
        return try MembersPage(json: try await request(.conversationMembers, body))
    }

    /// conversation:events: the room's history after event `since` (0: from the start), oldest first.
    public func events(in roomID: String, since: Int64 = 0, pageSize: Int? = nil) async throws(ParlorError) -> EventsPage {
        var body: [String: JSONValue] = ["cid": .string(roomID), "since": JSONValue(since)]
        if let pageSize { body["page_size"] = JSONValue(pageSize) }
        return try EventsPage(json: try await request(.conversationEvents, body))
    }

    /// Any request of the protocol (audio:enable, rtc:offer, …) that has no typed method yet: the reply's body,
    /// or the server's refusal as a ParlorError. Waits out a reconnect like every other request.
    public func rawRequest(_ type: String, body: [String: JSONValue] = [:]) async throws(ParlorError) -> JSONValue {
        try await request(type, body)
    }

    /// Uses `token` for every later reconnect. The server closes a session when its token expires (close code 4001);
    /// give the session a fresh token from `ParlorServer.auth` before then and it reconnects and resumes with it.
    /// Without one, the reconnect is refused (401) and the session closes with that `auth:error:*` error.
    public func updateToken(_ token: String) {
        connector = SessionConnector(endpoint: connector.endpoint, token: token, configuration: connector.configuration)
    }

    /// session:ping: a round trip. Replies come in order, so everything sent before it has been received after it.
    public func ping() async throws(ParlorError) {
        _ = try await request(.sessionPing, [:])
    }

    /// Ends the session: a WebSocket close, no reconnecting, waiting requests fail with `client:error:closed`, and
    /// both streams finish. Memberships are not left: other members see you `dropped` once the server's grace
    /// period is over, so call `leave` first to leave at once.
    ///
    /// When it returns, nothing of the session runs on in the background: a reconnect attempt under way has
    /// stopped too. Calling it again (or after the session ended by itself) is harmless.
    public func close() async {
        let reconnecting = reconnectTask
        if !isClosed {
            let transport = self.transport
            self.transport = nil
            generation += 1
            reconnecting?.cancel()
            finish(nil)
            transport?.close()
        }
        await reconnecting?.value
    }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    var isReconnecting: Bool {
        if case .reconnecting = state { return true }
        return false
    }
}
