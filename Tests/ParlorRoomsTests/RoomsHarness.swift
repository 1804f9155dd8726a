import ParlorBasics
import ParlorLoop  // the rooms thread is the server's: an EventLoop (`SerialThread`)
import ParlorPostgres
import ParlorProtocol
@testable import ParlorRooms
import ParlorRoomsPostgres
import ParlorRoomsSQLite
import ParlorStore
import PostgresTestCluster
import Testing

/// The stores the rooms tests run against: each test takes both as arguments, so the domain's behaviour is one
/// conformance suite for every `RoomStore`.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// In-memory SQLite.
    case sqlite
    /// A fresh database on the test run's PostgreSQL cluster (PostgresTestCluster).
    case postgres

    var testDescription: String { rawValue }
}

/// One RoomsService over a store (in-memory SQLite or a fresh PostgreSQL database), a manual clock and a recording
/// delivery channel: the rooms logic without a socket. Every call waits on the rooms thread until what it started
/// has run (no sleeps).
final class RoomsHarness {
    let store: any RoomStore
    let users: UserDirectory
    private let closeStore: () -> Void
    let channel = RecordingChannel()
    let configuration: RoomsConfiguration
    private(set) var clock: ManualClock
    private(set) var service: RoomsService
    /// Messages taken from the channel while looking for a reply, kept for `messages(_:)`.
    private var unread: [ClientID: [RecordingChannel.Received]] = [:]
    private var lastClientID: UInt64 = 1000
    private var lastTID = 0

    init(_ kind: StoreKind = .sqlite, _ configure: (inout RoomsConfiguration) -> Void = { _ in }) throws {
        var configuration = RoomsConfiguration()
        configuration.gracePeriod = .seconds(10)
        configure(&configuration)
        self.configuration = configuration
        switch kind {
        case .sqlite:
            let database = try Database(DatabaseConfiguration(path: ":memory:"))
            store = SQLiteRoomStore(database: database)
            users = UserDirectory(database: database)
            closeStore = { database.close() }
        case .postgres:
            let database = try PostgresDatabase(url: try TestPostgres.shared().makeDatabase(), poolSize: 2)
            store = PostgresRoomStore(database: database)
            users = UserDirectory(store: PostgresUserStore(database: database))
            closeStore = { database.close() }
        }
        clock = ManualClock()
        service = try RoomsService(store: store, thread: EventLoop(name: "parlor-rooms"), configuration: configuration, logger: Logger(level: .off), delivery: channel,
                                   clock: clock)
    }

    /// One node of several on the PostgreSQL database `url` (its own pool, node id and `PostgresClusterLink`).
    init(clusterDatabase url: PostgresURL, _ configure: (inout RoomsConfiguration) -> Void = { _ in }) throws {
        var configuration = RoomsConfiguration()
        configuration.gracePeriod = .seconds(10)
        configure(&configuration)
        self.configuration = configuration
        let database = try PostgresDatabase(url: url, poolSize: 2)
        let nodeID = Identifier.make(Identifier.node)
        store = PostgresRoomStore(database: database, nodeID: nodeID)
        users = UserDirectory(store: PostgresUserStore(database: database))
        clock = ManualClock()
        let link = PostgresClusterLink(database: database, nodeID: nodeID, lease: .seconds(15), logger: Logger(level: .off))
        service = try RoomsService(store: store, thread: EventLoop(name: "parlor-rooms"), configuration: configuration, logger: Logger(level: .off), delivery: channel,
                                   clock: clock, cluster: link)
        closeStore = { database.close() }
    }

    /// Stops the rooms thread as a shutdown does (memberships stay as they are), then starts a new service over the
    /// same store, as the next process would; its clock starts where the old one stood, plus `after` seconds.
    func restart(after seconds: Double = 1) throws {
        let now = service.thread.submitAndWait { [clock] in clock.now() }
        service.beginShutdown()
        service.stop()
        clock = ManualClock(start: now + Int64(seconds * 1000))
        service = try RoomsService(store: store, thread: EventLoop(name: "parlor-rooms"), configuration: configuration, logger: Logger(level: .off), delivery: channel,
                                   clock: clock)
        sync()
    }

    func stop() {
        service.stop()
        closeStore()
    }

    /// Closes the store under the running service: every batch from now on fails to begin its transaction.
    func closeStoreUnderTheService() {
        closeStore()
    }

    /// Returns once everything queued on the rooms thread before it has run (and its deliveries are recorded);
    /// commands waiting for the end of a commit window are applied now.
    func sync() {
        service.thread.submitAndWait { [service] in service.drain() }
    }

    /// Moves the clock on; every timer that falls due fires at its own time, and what it started runs.
    func advance(seconds: Double) {
        let target = service.thread.submitAndWait { [clock] in clock.now() } + Int64(seconds * 1000)
        while service.thread.submitAndWait({ [clock] in clock.fireNext(upTo: target) }) { sync() }
        sync()
    }

    var pendingTimers: Int { service.thread.submitAndWait { [clock] in clock.pendingTimers } }

    /// A new connection of user `name`, greeted with session:success.
    func connect(_ name: String, address: String? = nil) throws -> ClientRef {
        lastClientID += 1
        let client = ClientRef(id: ClientID(lastClientID), sessionID: Identifier.make(Identifier.session), user: try users.findOrCreate(name: name),
                               address: address)
        service.connect(client)
        sync()
        let greeting = messages(client)
        #expect(greeting.map(\.type) == ["session:success"])
        return client
    }

    func disconnect(_ client: ClientRef) {
        service.disconnected(client)
        sync()
    }

    /// Sends a request and returns its reply (`T:success` or `error`); other messages stay for `messages(_:)`.
    @discardableResult
    func request(_ request: RoomRequest, from client: ClientRef) -> JSONValue {
        lastTID += 1
        service.handle(request, tid: .string("t\(lastTID)"), from: client)
        sync()
        var reply: JSONValue = .null
        for item in channel.take(client.id) {
            if case .message(let message, true) = item, message["tid"]?.stringValue == "t\(lastTID)" {
                reply = message
            } else {
                unread[client.id, default: []].append(item)
            }
        }
        #expect(reply != .null, "no reply to \(request.type)")
        return reply
    }

    /// Joins each client to the room in order, clears what they have been sent so far, and returns their member ids.
    @discardableResult
    func joinQuietly(_ clients: [ClientRef], to roomID: String) throws -> [String] {
        let memberIDs = try clients.map { client in
            try #require(request(.join(cid: roomID), from: client).body?["member_id"]?.stringValue)
        }
        for client in clients { _ = messages(client) }
        return memberIDs
    }

    /// Runs an HTTP-side operation (create, close, kick, …) and returns its result.
    func perform(_ operation: Operation) -> Result<JSONValue, RoomError> {
        let result = Locked<Result<JSONValue, RoomError>?>(nil)
        service.perform(operation) { outcome in result.withLock { $0 = outcome } }
        sync()
        return result.withLock { $0 } ?? .failure(RoomError(.serverInternal, "the operation did not complete (test harness)"))
    }

    /// Creates a room and returns its id.
    func createRoom(ttl: Int64? = nil, maxMembers: Int64? = nil, by creator: ClientRef? = nil, mode: RoomMode = .open) throws -> String {
        var request = NewRoom(name: nil, displayName: "Test room", ttl: ttl, maxMembers: maxMembers, createdBy: creator?.user)
        request.mode = mode
        let room = try perform(.createRoom(request)).get()
        return try #require(room["id"]?.stringValue)
    }

    /// Everything but replies delivered to the client since the last look.
    func messages(_ client: ClientRef) -> [JSONValue] {
        deliveries(client).compactMap { if case .message(let message, _) = $0 { message } else { nil } }
    }

    /// Every delivery to the client since the last look (closes and drops included), replies aside.
    func deliveries(_ client: ClientRef) -> [RecordingChannel.Received] {
        let items = (unread.removeValue(forKey: client.id) ?? []) + channel.take(client.id)
        return items.filter { if case .message(_, true) = $0 { false } else { true } }
    }

    /// The room's stored history.
    func storedEvents(_ roomID: String) throws -> [EventRecord] {
        try store.read { try $0.events(roomID: roomID, since: 0, pageSize: 1000) }.items
    }

    func storedMembers(_ roomID: String, state: MemberState? = nil) throws -> [MemberRecord] {
        try store.read { try $0.members(roomID: roomID, state: state, descending: false, pageSize: 1000, cursor: nil) }.items
    }

    func storedRoom(_ roomID: String) throws -> RoomRecord? {
        try store.read { try $0.room(id: roomID) }
    }
}

extension JSONValue {
    var type: String? { self["type"]?.stringValue }
    var body: JSONValue? { self["body"] }
    var errorCode: String? { self["type"]?.stringValue == "error" ? self["body"]?["code"]?.stringValue : nil }
}
