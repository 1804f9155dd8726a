import ParlorBasics
import ParlorMedia
import ParlorMetrics
import ParlorProtocol
import ParlorStore
import Synchronization

/// The live rooms: one thread owns all room state and the order of everything that happens to it.
///
/// Connections hand it commands; it drains them in batches, applies each batch inside one write transaction of its
/// `RoomStore` (a savepoint per command, so one failure does not undo the others), commits, and only then sends
/// replies and events through the Outbox. So an event a client saw is always in the history, and every receiver
/// sees a room's events in one order.
public final class RoomsService: @unchecked Sendable {  // live state is confined to `thread` (see `state`); `inbox` is behind a lock
    /// The rooms thread (the app's: an event loop of its own); the service starts and stops it.
    let thread: any SerialThread
    /// The record of rooms, members, events and sessions; the REST routes read it from any thread.
    public let store: any RoomStore
    /// Wall-clock time and timers (the rooms thread's, or a test's manual clock); rooms thread only.
    let clock: any RoomsClock
    /// Where committed deliveries go (ParlorApp: the WebSocket connections).
    let delivery: any DeliveryChannel
    let configuration: RoomsConfiguration
    let logger: Logger
    /// What the rules of a room need (the clock, the configuration, the limits, the timers, the attachments),
    /// handed to each command's step.
    let rules: RoomRules
    private let timers: RoomTimers
    /// Creating, loading and re-reading rooms; rooms thread only.
    let roomDirectory: RoomDirectory
    /// The paced replay of resumed sessions and its global budget; rooms thread only.
    let replayPacer: ReplayPacer
    /// The connections and their sessions (open, resume, close), and the sweep of sessions past resuming; rooms
    /// thread only.
    let clientSessions: ClientSessions
    let sessionExpiry: SessionExpiry
    /// Presence changes that did not commit, tried again until they do; rooms thread only.
    let presenceRetries: PresenceRetries
    /// Records joins, leaves and room lifecycle in each batch's transaction (the webhook outbox); rooms thread.
    private let noticeRecorder: (any RoomNoticeRecorder)?
    /// The steps after every batch's transaction, in order (RoomsService+BatchObservers.swift); rooms thread only.
    var batchObservers: [any BatchObserver]
    /// Commands with the monotonic time they arrived (for parlor_join_seconds).
    private let inbox = Locked(Inbox())
    private let shuttingDown = Atomic<Bool>(false)
    private let changeCounter = Atomic<UInt64>(0)
    /// Users with a session or a membership, for POST /auth (LiveUsers.swift).
    public let liveUsers = LiveUsers()
    /// Rooms, members, deliveries and latencies for /metrics; also where the app layer counts what it refuses.
    public let metrics: ServerMetrics
    private let liveState: RoomsState
    /// Forwarding-unit sessions and their limits, relayed offers' answers at the media home, and rtc:* signalling
    /// (MediaSessions.swift), which holds this node's offers to another node's media home (`homes`, MediaHomes.swift).
    let mediaSessions: MediaSessions
    /// Catching rooms up with the other nodes on a shared database (ClusterSync.swift); nil on a single node.
    let clusterSync: ClusterSync?
    /// The other nodes on a shared database; nil on a single node.
    var cluster: (any ClusterLink)? { clusterSync?.link }

    /// The live rooms and clients: reaching them off the rooms thread is a bug, stopped in debug builds.
    var state: RoomsState {
        assertOnRoomsThread()
        return liveState
    }

    /// Stops a debug build when called off the rooms thread; `assert` is compiled out of release builds.
    @inline(__always)
    func assertOnRoomsThread(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        assert(thread.isCurrent, "\(function) must run on the rooms thread", file: file, line: line)
    }

    /// Loads open rooms and treats every membership a previous process left JOINED as disconnected:
    /// it gets a full grace period to resume, then drops.
    /// `thread`: not started yet; the service starts it and `stop()` stops it.
    /// `clock` nil: the real clock and `thread`'s timers. A test passes a manual clock (used on the rooms thread only).
    /// `clusterUserChanged`: with several nodes, told on the rooms thread of every user whose tokens or claim changed
    /// on some node (the app drops its cached status, so the next request reads the record).
    public init(store: any RoomStore, thread: any SerialThread, configuration: RoomsConfiguration, logger: Logger,
                delivery: any DeliveryChannel, clock: (any RoomsClock)? = nil, observer: (any RoomNoticeRecorder)? = nil,
                metrics: ServerMetrics = ServerMetrics(), media: MediaServer? = nil, cluster: (any ClusterLink)? = nil,
                clusterUserChanged: (@Sendable (String) -> Void)? = nil) throws {
        self.store = store
        let clock = clock ?? ThreadClock(thread: thread)
        let state = RoomsState()
        liveState = state
        clusterSync = cluster.map { ClusterSync(link: $0, store: store, userChanged: clusterUserChanged) }
        self.delivery = delivery
        self.metrics = metrics
        noticeRecorder = observer
        batchObservers = Self.standardBatchObservers(notices: observer)
        self.configuration = configuration
        self.logger = logger
        self.thread = thread
        self.clock = clock
        timers = RoomTimers(clock: clock)
        let confined = ConfinedRoomsState(state, thread: thread)
        let attachments = MemberAttachments(clusterSync: clusterSync, timers: timers, clock: clock,
                                            gracePeriod: configuration.gracePeriod, state: confined)
        let rules = RoomRules(configuration: configuration, clock: clock, metrics: metrics, logger: logger, state: confined,
                              timers: timers, attachments: attachments, mediaJSON: MediaSessions.json(for: media))
        self.rules = rules
        roomDirectory = RoomDirectory(store: store, clock: clock, configuration: configuration, logger: logger, metrics: metrics,
                                      timers: timers, state: confined)
        replayPacer = ReplayPacer(configuration: configuration, logger: logger)
        clientSessions = ClientSessions(replayPacer: replayPacer, liveUsers: liveUsers, clock: clock, configuration: configuration,
                                        state: confined)
        presenceRetries = PresenceRetries(rules: rules, clientSessions: clientSessions, clustered: cluster != nil)
        sessionExpiry = SessionExpiry(clock: clock, gracePeriod: configuration.gracePeriod)
        let mediaHomes = MediaHomes(rules: rules, clustered: cluster != nil)
        mediaSessions = MediaSessions(server: media, homes: mediaHomes, rules: rules, clustered: cluster != nil)
        sessionExpiry.due = { [weak self] in self?.submit(.expireSessions) }
        timers.due = { [weak self] in self?.submit($0) }
        presenceRetries.due = { [weak self] in self?.submit(.settle($0, attempt: $1)) }
        mediaHomes.relayTimedOut = { [weak self] request in self?.submit(.cluster(.mediaHome(.timedOut(request: request)))) }
        mediaSessions.openCaughtUpRoom = { [weak self] roomID, transaction, batch, step in
            guard let self else { throw RoomError.notFound(roomID) }
            try self.clusterSync?.sync(roomID, lock: false, transaction, &batch)
            return try step.openRoom(roomID)
        }
        clusterSync?.wire(rules: rules, directory: roomDirectory, operations: self, mediaHomes: mediaSessions)
        thread.start()
        let recovered: Result<Int, Error> = thread.submitAndWait { [self] in
            Result {
                guard let clusterSync = self.clusterSync else { return try self.roomDirectory.recover() }
                try clusterSync.start { [weak self] signal in self?.submit(.cluster(signal)) }
                return 0
            }
        }
        let count = try recovered.get()
        thread.submitAndWait { [self] in
            self.syncLiveUsers(Set(self.state.rooms.keys))
            self.publishRoomGauges(changed: Set(self.state.rooms.keys))
        }
        if count > 0 { logger.info("recovered memberships from a previous run", ["members": String(count)]) }
        thread.execute { [self] in self.sessionExpiry.schedule() }
        try media?.start { [weak self] event in self?.submit(.mediaEvent(event)) }
    }

    /// Grows after every commit that touched a room (members, media, lifecycle): what was read from the database
    /// under an older value may be stale. It grows after the commit, so a read that sees the new value sees the commit.
    public var roomsVersion: UInt64 { changeCounter.load(ordering: .acquiring) }

    /// A batch changed a room: `roomsVersion` grows (after the commit).
    func roomsDidChange() { changeCounter.add(1, ordering: .releasing) }

    // MARK: Entry points (any thread)

    public func connect(_ client: ClientRef) { submit(.connect(client)) }

    public func handle(_ request: RoomRequest, tid: JSONValue, from client: ClientRef) {
        submit(.request(client, tid: tid, request))
    }

    /// The connection is gone. During shutdown this is ignored: memberships stay as they are for the next start.
    public func disconnected(_ client: ClientRef) {
        guard !shuttingDown.load(ordering: .acquiring) else { return }
        submit(.disconnected(client))
    }

    /// Runs an HTTP-initiated operation (create, close, kick, …) in order with everything else; `completion` gets
    /// its JSON result after the commit, on the rooms thread.
    public func perform(_ operation: Operation, completion: @escaping @Sendable (Result<JSONValue, RoomError>) -> Void) {
        submit(.operation(operation, completion))
    }

    /// Closes the client's connection once every reply decided before this call has been queued to it (a client
    /// that breaks the framing still gets the answers to what it sent before).
    public func closeAfterReplies(_ client: ClientRef, code: UInt16, reason: String) {
        submit(.closeAfterReplies(client, code: code, reason: reason))
    }

    /// From now on disconnects are not processed (so a restart can resume them) and requests are refused.
    public func beginShutdown() {
        shuttingDown.store(true, ordering: .releasing)
    }

    /// Waits for queued work to finish and stops the rooms thread.
    public func stop() {
        cluster?.stop()
        thread.submitAndWait { [self] in self.drain() }
        thread.stop()
        thread.waitUntilStopped()
    }

    /// Commands waiting for the rooms thread. A drain applies what was queued when it started; a command submitted
    /// after that start queues a drain of its own, unless it came within the commit window of the last drain's
    /// start: that drain's timer then takes it at the window's end. So under load the commands of one window share
    /// one transaction, and the rooms thread wakes once per window (for its timer), not for every command; a
    /// command after a quiet window is applied at once. A task queued after a submit finds it applied only with no
    /// window (tests that need that call `drain()` themselves).
    private struct Inbox {
        var commands: [(Command, receivedAt: UInt64)] = []
        /// Commands ever submitted.
        var submitted = 0
        /// Submissions up to this count are taken by a drain already queued or running (.max: one is queued and
        /// has not started, so it takes everything submitted before it starts).
        var covered = 0
        /// Monotonic ns: a drain is due at this time (the end of the last one's commit window; 0: none).
        var windowEnd: UInt64 = 0
    }

    func submit(_ command: Command) {
        let startDrain = inbox.withLock { inbox in
            // The clock is read under the lock: a window's drain takes the lock at `windowEnd` or later, so a submit
            // that still reads an earlier time is ahead of that drain, which will find its command. Read before
            // the lock, a submit delayed past the drain would wait for a drain that had already run.
            let now = MonotonicClock.now()
            inbox.commands.append((command, now))
            inbox.submitted += 1
            guard inbox.submitted > inbox.covered else { return false }
            inbox.covered = .max
            return now >= inbox.windowEnd
        }
        if startDrain { thread.execute { [self] in self.drain() } }
    }

    // MARK: Batches (rooms thread)

    /// The most commands one transaction applies. A burst (10,000 clients disconnecting at once) otherwise becomes
    /// one batch whose deliveries, notices and dirty pages are all held until its single commit.
    static let maxCommandsPerBatch = 256

    /// Applies what was queued when it started, in transactions of at most `maxCommandsPerBatch`. What comes
    /// meanwhile has queued its own drain, behind the loop's timers and tasks queued since, or is taken by the drain
    /// this one schedules for the end of its commit window. Called directly (at `stop`, by tests) it applies
    /// everything queued without waiting for a window.
    func drain() {
        assertOnRoomsThread()
        let window = configuration.commitWindow.nanoseconds
        var budget = inbox.withLock { inbox in
            inbox.covered = inbox.submitted
            if window > 0, !inbox.commands.isEmpty { inbox.windowEnd = MonotonicClock.now() &+ window }
            return inbox.commands.count
        }
        // The window's drain: it runs at `windowEnd` or later (loop timers never fire early), so it finds whatever
        // a submit that saw the window open appended. Idle, it finds nothing and schedules no other. The thread's own
        // timer, not `clock`: the window is real time even when a test drives the rooms' clock by hand.
        if window > 0, budget > 0 { _ = thread.schedule(after: configuration.commitWindow) { [weak self] in self?.drain() } }
        while budget > 0 {
            let received = inbox.withLock { inbox in
                let taken = Array(inbox.commands.prefix(min(budget, Self.maxCommandsPerBatch)))
                inbox.commands.removeFirst(taken.count)
                return taken
            }
            guard !received.isEmpty else { return }
            budget -= received.count
            apply(received)
        }
    }

    /// One batch: its commands in one transaction, then the batch observers (replies and events among them).
    private func apply(_ received: [(Command, receivedAt: UInt64)]) {
        if let reloaded = roomDirectory.reloadStale() {
            // Their live users and media follow.
            mediaSessions.sync(reloaded)
            syncLiveUsers(reloaded)
        }
        // Notifications of events already here (this node's own, mostly) need no transaction at all.
        let commands = received.map(\.0).filter { !(clusterSync?.isRedundantNotification($0) ?? false) }
        guard !commands.isEmpty else { return }
        var batch = Batch()
        // Presence changes that did not commit, to try again: those whose command failed, and if the whole batch
        // fails, those of every command in it.
        var retries: [(Settlement, attempt: Int)] = []
        var retriesIfTheBatchFails: [(Settlement, attempt: Int)] = []
        var started = 0
        // The retry of the command being applied, computed before it changes anything.
        var inProgress: (Settlement, attempt: Int)?
        let transactionStartedAt = MonotonicClock.now()
        var committed = true
        do {
            try store.write { transaction in
                try clusterSync?.lockRooms(of: commands, in: transaction)
                for command in commands {
                    inProgress = presenceRetries.retryOnFailure(of: command)
                    started += 1
                    if try apply(command, in: transaction, batch: &batch) {
                        if let inProgress { retriesIfTheBatchFails.append(inProgress) }
                    } else if let inProgress {
                        retries.append(inProgress)
                    }
                    inProgress = nil
                }
                // In the transaction: the outbox rows commit with the events they announce, or neither does.
                if let noticeRecorder, !batch.notices.isEmpty { try noticeRecorder.record(batch.notices, in: transaction) }
            }
        } catch {
            committed = false
            // The commit failed: nothing of this batch happened. Tell everyone waiting, and re-read the rooms it touched.
            logger.error("rooms batch failed to commit", ["error": "\(error)", "commands": String(commands.count)])
            batch.roomsToReload.formUnion(batch.changed.rooms)
            batch.failAll(commands, with: roomError(for: error))
            // Those that ran, the one that ended the transaction, and those that never ran.
            retries += retriesIfTheBatchFails + [inProgress].compactMap { $0 }
                + commands[started...].compactMap { presenceRetries.retryOnFailure(of: $0) }
        }
        metrics.commitSeconds.observe(nanoseconds: MonotonicClock.now() &- transactionStartedAt)
        // Re-read after the transaction: reading inside it would wait on our own write lock. Before the observers,
        // so they see the rooms as stored.
        roomDirectory.reload(batch.roomsToReload)
        reloadRecordings(batch.roomsToReload)
        batchEnded(BatchEnd(batch, committed: committed, retries: retries, received: received))
    }

    /// Runs one command in its own savepoint. Returns false if it failed for a reason other than a refusal
    /// (RoomError); throws if that failure also ended the transaction (SQLite does on some storage errors).
    private func apply(_ command: Command, in transaction: any RoomTransaction, batch: inout Batch) throws -> Bool {
        assertOnRoomsThread()
        var step = Step(store: transaction, batch: Batch(), rules: rules)
        do {
            try clusterSync?.prepare(for: command, in: transaction, batch: &batch)
            // A cluster signal is handled whole by ClusterSync.prepare(for:): no savepoint (two round trips) around nothing.
            if !command.isClusterSignal { try transaction.withSavepoint { try perform(command, &step) } }
            batch.merge(step.batch)
        } catch let error as RoomError {
            batch.fail(command, with: error)
        } catch {
            logger.error("rooms command failed", ["error": "\(error)"])
            batch.roomsToReload.formUnion(step.batch.changed.rooms)
            if !transaction.isActive { throw error }
            batch.fail(command, with: roomError(for: error))
            return false
        }
        return true
    }

    /// What a requester is told when the store failed: unavailable (try later) for a full or failing disk.
    func roomError(for error: Error) -> RoomError {
        store.isStorageFailure(error) ? .unavailable : .internalError
    }

    private func perform(_ command: Command, _ step: inout Step) throws {
        assertOnRoomsThread()
        switch command {
        case .connect(let client):
            try clientSessions.open(client, &step)
        case .request(let client, let tid, let request):
            if shuttingDown.load(ordering: .acquiring) { throw RoomError.shuttingDown }
            try serve(request, from: Caller(client: client, tid: tid), &step)
        case .disconnected(let client):
            try clientSessions.disconnected(client, &step)
        case .closeAfterReplies(let client, let code, let reason):
            step.batch.outbox.close(client.id, code: code, reason: reason)
        case .operation(let operation, _):
            if shuttingDown.load(ordering: .acquiring) { throw RoomError.shuttingDown }
            let result = try run(operation, &step)
            step.batch.complete(command, with: result)
        case .dropIfStillAway(let roomID, let memberID):
            try state.rooms[roomID]?.dropIfStillAway(memberID, &step)
        case .closeIfExpired(let roomID):
            try state.rooms[roomID]?.closeIfExpired(&step)
        case .sendAudience(let roomID):
            state.rooms[roomID]?.sendAudience(&step.batch.outbox, rules: rules)
        case .settle(let settlement, _):
            // During shutdown memberships stay as they are, for the next start to recover.
            if shuttingDown.load(ordering: .acquiring) { return }
            try presenceRetries.settle(settlement, &step)
        case .expireSessions:
            try sessionExpiry.sweep(step.store)
        case .mediaEvent(let event):
            try mediaSessions.handle(event, &step)
        case .recordingEnded(let recordingID, let reason, let manifest):
            try endRecording(recordingID, reason: reason, manifest: manifest, &step)
        case .liveListeners(let roomID, let listeners):
            state.rooms[roomID]?.liveListenersChanged(to: listeners, &step.batch.outbox, rules: rules)
        case .sendStreamStatus(let roomID):
            state.rooms[roomID]?.sendStreamStatus(&step.batch.outbox, rules: rules)
        case .cluster:
            break  // done before the command's savepoint: ClusterSync.swift
        }
    }

    private func serve(_ request: RoomRequest, from caller: Caller, _ step: inout Step) throws {
        assertOnRoomsThread()
        switch request {
        case .join(let cid, let e2ee): try step.context(for: cid).join(caller, statesEncryption: e2ee, &step)
        case .leave(let cid): try step.openRoom(cid).leave(caller, &step)
        case .members(let cid, let query): try step.replyMembers(cid, query: query, for: caller)
        case .events(let cid, let since, let pageSize): try step.replyEvents(cid, since: since, pageSize: pageSize, for: caller)
        case .resume(let sessionID, let last): try clientSessions.resume(sessionID, lastEventIDs: last, for: caller, &step)
        case .signal(let kind, let cid, let to, let payload):
            try mediaSessions.relay(kind, in: step.openRoom(cid), to: to, payload: payload, for: caller, &step)
        case .media(let cid, let change): try mediaSessions.changeMedia(change, in: step.openRoom(cid), for: caller, &step)
        case .mediaOffer(let cid, let sdp, let e2ee):
            try mediaSessions.requireForwardingUnit(hint: ": use rtc:* signalling")
            let room = try step.openRoom(cid)
            try room.requireEncryptionStatement(e2ee, for: .mediaOffer)
            try mediaSessions.offer(sdp, in: room, for: caller, &step)
        case .mediaClose(let cid): try mediaSessions.close(cid: cid, for: caller, &step)
        case .watch(let cid): try step.watch(cid, for: caller)
        case .unwatch(let cid): step.unwatch(cid, for: caller)
        case .ping: step.batch.reply(to: caller, .sessionPing, body: .object([:]))
        case .stage(let cid, let action): try step.openRoom(cid).serveStage(action, for: caller, &step)
        case .record(let cid, let start, let recordingID): try serveRecording(cid, start: start, recordingID: recordingID, for: caller, &step)
        case .e2eeKey(let cid, let body): try step.openRoom(cid).relayKey(body, for: caller, &step)
        case .streamPublic(let cid, let isPublic): try step.openRoom(cid).serveStreamPublic(isPublic, for: caller, &step)
        }
    }
}
