import ParlorLoop
import ParlorPostgres
import ParlorRooms
import ParlorStore

/// The node's link to the others on its PostgreSQL database: a `PostgresListener` on the `parlor_rooms` channel
/// (each committed event, room creation and close is NOTIFYed there with "room-id event-id"), and the node's
/// heartbeat on the same connection, every third of the lease, which also says when some node's lease has ended.
public final class PostgresClusterLink: ClusterLink, @unchecked Sendable {  // `listener` is set once in start, before any use
    public static let channel = "parlor_rooms"
    /// A notification "signal NODE-…": signalling frames wait for that node (room ids never start with it).
    static let signalPrefix = "signal "
    /// "user USR-…": the user's claim or tokens changed; "revoke USR-…": an admin revoked its tokens.
    static let userPrefix = "user ", revokePrefix = "revoke "
    /// "unstored NODE ROOM MESSAGE": a room's message that is not stored (`ClusterSignal.unstored`).
    static let unstoredPrefix = "unstored "
    public let nodeID: String
    private let database: PostgresDatabase
    /// Milliseconds a node's lease lasts after each heartbeat.
    private let leaseMilliseconds: Int64
    private let logger: Logger
    private var listener: PostgresListener?
    /// Where the other nodes reach this node's HTTP API (`nodes.http_url`), known once its listener is bound: every
    /// heartbeat writes it, so a row a survivor deleted and this node inserted again still has it.
    public let httpURL = Locked<String?>(nil)

    public init(database: PostgresDatabase, nodeID: String, lease: TimeSpan, logger: Logger) {
        self.database = database
        self.nodeID = nodeID
        leaseMilliseconds = max(1, Int64(lease.seconds * 1000))
        self.logger = logger
    }

    public func start(_ handler: @escaping @Sendable (ClusterSignal) -> Void) throws {
        let nodeID = nodeID, lease = leaseMilliseconds, logger = logger, httpURL = httpURL
        let now = PostgresRoomTransaction.databaseNow
        let failing = Locked(false)
        let beats = Locked(0)
        let listener = PostgresListener(
            url: database.url, channel: Self.channel, interval: Double(lease) / 3000,
            onNotify: { payload in
                if payload.hasPrefix(Self.signalPrefix) {
                    if payload.dropFirst(Self.signalPrefix.count) == nodeID { handler(.signals) }
                    return
                }
                if payload.hasPrefix(MediaHomeSignal.prefix) {
                    if let signal = MediaHomeSignal(payload: payload, nodeID: nodeID) { handler(.mediaHome(signal)) }
                    return
                }
                if payload.hasPrefix(Self.unstoredPrefix) {
                    let parts = payload.dropFirst(Self.unstoredPrefix.count).split(separator: " ", maxSplits: 2)
                    if parts.count == 3, parts[0] != nodeID {
                        handler(.unstored(node: String(parts[0]), roomID: String(parts[1]), message: Array(parts[2].utf8)))
                    }
                    return
                }
                for (prefix, revoked) in [(Self.userPrefix, false), (Self.revokePrefix, true)] where payload.hasPrefix(prefix) {
                    handler(.userChanged(String(payload.dropFirst(prefix.count)), revoked: revoked))
                    return
                }
                let parts = payload.split(separator: " ", maxSplits: 1)
                handler(.roomChanged(parts.first.map(String.init) ?? payload, through: parts.dropFirst().first.flatMap { Int64($0) }))
            },
            onConnected: {
                failing.withLock { $0 = false }
                handler(.resync)
                handler(.signals)
                handler(.mediaHome(.relayed(node: nodeID)))
            },
            periodic: { connection in
                // The heartbeat (again a row if a survivor took this node over while it was unreachable).
                let url: SQLValue = httpURL.withLock { $0 }.map { .text($0) } ?? .null
                let inserted = try connection.queryOne("""
                    INSERT INTO nodes (id, started_at, lease_until, http_url) VALUES ($1, \(now), \(now) + $2, $3)
                    ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until, http_url = COALESCE(excluded.http_url, nodes.http_url)
                    RETURNING (xmax = 0) AS inserted
                    """, [.text(nodeID), .integer(lease), url])?.bool("inserted") == true
                // The first beat may come before the rooms thread registers the node; a later insert means a survivor
                // deleted the row, having taken this node's members.
                let first = beats.withLock { count in
                    defer { count += 1 }
                    return count == 0
                }
                if inserted && !first {
                    logger.warning("this node's lease had ended and another node took over its members: claiming back those still connected here",
                                   ["node": nodeID])
                    handler(.leaseLost)
                }
                if try connection.queryOne("SELECT 1 AS found FROM nodes WHERE lease_until < \(now) LIMIT 1") != nil {
                    handler(.nodesExpired)
                }
            },
            onError: { error in
                // Once per outage, not at every attempt to connect again.
                guard !failing.withLock({ state in defer { state = true }; return state }) else { return }
                logger.warning("cluster link: \(error.message)", ["node": nodeID])
            })
        self.listener = listener
        try listener.start()
    }

    public func stop() {
        listener?.stop()
        do {
            _ = try database.writeOnPool { try $0.run("UPDATE nodes SET lease_until = 0 WHERE id = $1", [.text(nodeID)]) }
        } catch {
            logger.warning("could not give up the node's lease", ["node": nodeID, "error": "\(error)"])
        }
    }
}
