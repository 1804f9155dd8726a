import ParlorLoop

/// Everything /metrics reports, recorded where it happens: the loops (connections, requests, limits), the rooms
/// thread (rooms, members, deliveries, latencies) and the webhook threads. Counters are atomics or, for requests,
/// per-loop tables; nothing takes a lock on the hot path. The text is built at scrape time (`ServerMetrics+Exposition`).
public final class ServerMetrics: Sendable {
    public let httpConnections = MetricCell()
    public let webSocketConnections = MetricCell()
    /// Set by the rooms thread after each batch that touched a room.
    public let roomsOpen = MetricCell()
    public let membersJoined = MetricCell()
    public let eventsDelivered = MetricCell()
    /// Stage rooms announcing their audience in summary (above --full-presence-limit), and the room:audience events
    /// handed to connections, one per receiver (issue 37: what a big audience costs, in a form an operator can alert on).
    public let roomsSummaryPresence = MetricCell()
    public let audienceUpdatesDelivered = MetricCell()
    /// From a join reaching the rooms thread to its reply being handed to the connection's loop.
    public let joinSeconds = MetricsHistogram()
    /// One rooms batch's transaction, BEGIN IMMEDIATE to COMMIT (group commit: one per batch, not per command).
    public let commitSeconds = MetricsHistogram()
    public let webhookFailures = MetricCell()
    /// The webhook outbox: its rows (this node's), its oldest row's time (Unix ms, 0: empty), rows dropped because
    /// it was full (--webhook-queue-max), and rows given up once they failed for --webhook-retry-for.
    public let webhookQueueDepth = MetricCell()
    public let webhookOldestCreatedAt = MetricCell()
    public let webhookDropped = MetricCell()
    public let webhookGaveUp = MetricCell()
    /// The media server (--media sfu): open sessions, and RTP packets forwarded (one per subscriber copy) and
    /// dropped (not allowed to send, failed authentication, unknown source), added once per receive batch.
    public let mediaSessions = MetricCell()
    public let mediaPacketsForwarded = MetricCell()
    public let mediaPacketsDropped = MetricCell()
    /// STUN binding requests on the media port dropped unanswered: no USERNAME/MESSAGE-INTEGRITY, or wrong ones.
    public let mediaSTUNUnauthenticated = MetricCell()
    /// Decrypted RTP packets one media worker handed to another (--media-workers): once per packet and worker with
    /// listeners of its speaker.
    public let mediaPacketsHandedOff = MetricCell()
    /// Streamed HTTP responses (the live stream, issue 38): body bytes handed to their connections, and clients cut
    /// off because they did not read (`maxStreamBacklogBytes`).
    public let streamBytes = MetricCell()
    public let streamSlowReadersClosed = MetricCell()
    /// Listeners of rooms' live streams (GET /rooms/{id}/live.ogg) and the live mixes running for them (one a room).
    public let liveListeners = MetricCell()
    public let liveMixes = MetricCell()
    /// Node-to-node media links (--cluster-media-address).
    public let mediaLink = MediaLinkCounters()
    private let rateLimitedCells: [RateLimit: MetricCell]
    private let requestTables: [ObjectIdentifier: LoopRequestCounts]
    private let loops: [EventLoop]

    /// `loops` are the event loops whose requests are counted; a request on another thread is not.
    public init(loops: [EventLoop] = []) {
        self.loops = loops
        var tables: [ObjectIdentifier: LoopRequestCounts] = [:]
        for loop in loops { tables[ObjectIdentifier(loop)] = LoopRequestCounts() }
        requestTables = tables
        var cells: [RateLimit: MetricCell] = [:]
        for limit in RateLimit.allCases { cells[limit] = MetricCell() }
        rateLimitedCells = cells
    }

    public func rateLimited(_ limit: RateLimit) { rateLimitedCells[limit]?.add() }
    public func rateLimitedCount(_ limit: RateLimit) -> Int { rateLimitedCells[limit]?.load() ?? 0 }

    /// Counts one answered request; called on `loop`'s thread.
    public func recordRequest(_ key: RequestKey, on loop: EventLoop) {
        requestTables[ObjectIdentifier(loop)]?.record(key)
    }

    /// Asks every loop for its request counts and calls `done` (on the last loop to answer) with their sum.
    /// Asynchronous so that a scrape never blocks a loop waiting for another.
    public func collectRequests(_ done: @escaping @Sendable ([RequestKey: Int]) -> Void) {
        guard !loops.isEmpty else { return done([:]) }
        let gathered = Locked<(total: [RequestKey: Int], remaining: Int)>(([:], loops.count))
        for loop in loops {
            guard let table = requestTables[ObjectIdentifier(loop)] else { continue }
            loop.execute {
                let counts = table.counts
                let finished: [RequestKey: Int]? = gathered.withLock { state in
                    state.total.merge(counts, uniquingKeysWith: +)
                    state.remaining -= 1
                    return state.remaining == 0 ? state.total : nil
                }
                if let finished { done(finished) }
            }
        }
    }
}
