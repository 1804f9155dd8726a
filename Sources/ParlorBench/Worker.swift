#if canImport(Glibc)
import Glibc
#endif
import ParlorCodec
import ParlorLoop

/// One generator thread: an `EventLoop` driving a share of the clients. A timer on the loop follows the run's phase
/// (set by the main thread): ramp opens connections, churn issues leave+join at the target rate, close sends every
/// client's close frame and stops the loop once the sockets are gone.
final class Worker: @unchecked Sendable {  // mutable state is confined to `loop`'s thread; main reads `stats` after it stopped
    let id: Int
    let settings: WorkerSettings
    let shared: SharedState
    let loop: EventLoop
    private(set) var clients: [BenchClient] = []
    var stats = WorkerStats()
    var random: FastRandom
    /// Clients between their connect and their first join's success.
    var inFlight = 0
    var churnStart: Int64 = 0
    private var nextToStart = 0
    private var churnCursor = 0
    private var closeStarted = false
    private var closeDeadline: Int64 = 0
    private var openSockets = 0
    private let ratePerNanosecond: Double

    init(id: Int, settings: WorkerSettings, shared: SharedState, clients assignments: [ClientAssignment], workerCount: Int) throws(SystemError) {
        self.id = id
        self.settings = settings
        self.shared = shared
        loop = try EventLoop(name: "bench-worker-\(id)")
        random = FastRandom(seed: UInt64(id + 1) &* 0x2545_F491_4F6C_DD1D ^ UInt64(Clock.now()))
        ratePerNanosecond = settings.churnRatePerSecond / Double(workerCount) / 1e9
        clients = assignments.map { BenchClient($0, worker: self) }
    }

    func start() {
        loop.start()
        loop.execute { [self] in tick() }
    }

    /// Blocks until the worker has closed its clients and its loop has stopped.
    func waitUntilFinished() { loop.waitUntilStopped() }

    /// Follows the phase every few milliseconds (every one while churning, so operations leave close to their time).
    private func tick() {
        loop.assertInLoop()
        let phase = shared.currentPhase
        let now = Clock.now()
        switch phase {
        case .ramp:
            startConnections()
        case .churn:
            if churnStart == 0 { churnStart = now }
            issueChurn(now: now)
        case .drain:
            break
        case .close:
            if !closeStarted { beginClose(now: now) }
            if openSockets == 0 || now > closeDeadline {
                abandonRemaining()
                loop.stop()
                return
            }
        }
        loop.schedule(after: .milliseconds(phase == .churn ? 1 : 5)) { [unowned self] in tick() }
    }

    // MARK: Ramp

    private func startConnections() {
        while inFlight < settings.rampConcurrency, nextToStart < clients.count {
            let client = clients[nextToStart]
            nextToStart += 1
            client.state = .connecting
            client.opSentAt = Clock.now()
            client.pending = loop.connect(to: settings.addresses[client.node], handler: client)
            inFlight += 1
            openSockets += 1
            shared.openCount.add(1, ordering: .relaxed)
        }
    }

    /// A client finished ramping (joined or failed): its slot goes to the next one at once, not at the next tick.
    func rampSlotFreed() {
        inFlight -= 1
        if shared.currentPhase == .ramp { startConnections() }
    }

    func fail(_ client: BenchClient, _ kind: String) {
        stats.error(kind)
        let wasRamping = [.connecting, .handshaking, .awaitingSession, .initialJoin].contains(client.state)
        if client.state == .leaving || client.state == .rejoining { shared.outstandingOps.subtract(1, ordering: .relaxed) }
        if client.state == .notStarted || wasRamping { shared.failedCount.add(1, ordering: .relaxed) }
        if client.state == .joined || client.state == .leaving || client.state == .rejoining {
            shared.joinedCount.subtract(1, ordering: .relaxed)
        }
        closeSocket(client)
        client.state = .failed
        if wasRamping { rampSlotFreed() }
    }

    /// Cancels the connect or closes the connection; its handler then hears nothing more of it.
    func closeSocket(_ client: BenchClient) {
        if client.releaseSocket() { socketGone() }
    }

    private func socketGone() {
        openSockets -= 1
        shared.openCount.subtract(1, ordering: .relaxed)
    }

    func connectFailed(_ client: BenchClient, _ error: SystemError) {
        client.pending = nil
        socketGone()
        fail(client, "connect: \(String(cString: strerror(error.errno)))")
    }

    /// The connection closed itself: for a connection nobody closes on purpose, only a failed write does that.
    func connectionClosed(_ client: BenchClient) {
        guard client.connection != nil else { return }  // closed through closeSocket, already counted
        client.connection = nil
        socketGone()
        if client.state != .closing { fail(client, "write failed (\(client.state))") }
    }

    // MARK: Churn

    private func issueChurn(now: Int64) {
        let target = Int(Double(now - churnStart) * ratePerNanosecond)
        var scanned = 0
        while stats.opsIssued < target, !clients.isEmpty {
            let client = clients[churnCursor]
            churnCursor = (churnCursor + 1) % clients.count
            scanned += 1
            if client.state == .joined {
                client.state = .leaving
                client.opSentAt = now
                shared.outstandingOps.add(1, ordering: .relaxed)
                send(client, request: "conversation:leave")
                stats.opsIssued += 1
                scanned = 0
            } else if scanned >= clients.count {
                // Nobody is free: the generator (or the server) is behind; count what was not issued.
                stats.opsSkipped += target - stats.opsIssued
                stats.opsIssued = target
            }
        }
    }

    func send(_ client: BenchClient, request type: String) {
        let tid = client.nextTID
        client.nextTID += 1
        let text = "{\"type\":\"\(type)\",\"tid\":\"\(tid)\",\"body\":{\"cid\":\"\(client.roomID)\"}}"
        client.connection?.write(WebSocketFrameEncoder.text(text, mask: random.mask()))
    }

    // MARK: Close

    private func beginClose(now: Int64) {
        closeStarted = true
        stats.joinedByNode = Array(repeating: 0, count: settings.endpoints.count)
        for client in clients where [.joined, .leaving, .rejoining].contains(client.state) { stats.joinedByNode[client.node] += 1 }
        closeDeadline = now + Int64(settings.closeTimeoutSeconds * 1e9)
        for client in clients where client.hasSocket {
            if client.state == .connecting || client.state == .handshaking {
                fail(client, "closed before open")
                continue
            }
            if client.state == .leaving || client.state == .rejoining { stats.error("op timeout") }
            client.state = .closing
            client.connection?.write(WebSocketFrameEncoder.close(code: WebSocketCloseCode.normal, mask: random.mask()))
        }
    }

    private func abandonRemaining() {
        for client in clients where client.hasSocket {
            stats.error("close timeout")
            closeSocket(client)
        }
    }
}
