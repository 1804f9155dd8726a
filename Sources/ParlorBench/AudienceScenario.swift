#if canImport(Glibc)
import Glibc
#endif
import ParlorCodec
import ParlorLoop
import Synchronization

/// The `audience` scenario (issue 37's audience-10k): one stage room that a moderator creates; `--clients` members
/// join it at `--join-rate`, in index order (0 the moderator, 1 the speaker, 2 the listener the moderator promotes and
/// demotes, the rest the audience), then everyone stays for `--duration` seconds. Meanwhile the speaker's speaking state
/// flips every `--speaking-interval` and the moderator changes the target's role every `--role-interval`; every member
/// that receives one of those changes records how long it took. One event loop drives every client, so all of this
/// state is confined to its thread; the main thread reads `progress` while it runs and the rest after it stopped.
final class AudienceScenario: @unchecked Sendable {  // confined to `loop`'s thread; main reads after waitUntilFinished
    enum Phase: Int { case fill = 0, hold = 1, close = 2, done = 3 }

    /// One role or speaking change: when it was sent, how many members were in the room then, who received it how fast.
    struct Change {
        var sentAt: Int64
        var joinedWhenSent: Int
        var afterFill: Bool
        var received = 0
        var latencies: [Int64] = []
    }

    /// What the main thread reads while the loop runs.
    final class Progress: Sendable {
        let phase = Atomic<Int>(Phase.fill.rawValue)
        let joined = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
    }

    let options: Options
    let loop: EventLoop
    let address: SocketAddress
    let roomID: String
    let namePrefix: String
    let progress = Progress()
    private(set) var clients: [AudienceClient] = []
    var random = FastRandom(seed: UInt64(Clock.now()))

    // Results (loop thread while running).
    var errors: [String: Int] = [:]
    var moderatorJoinLatency: [Int64] = []
    var roleChanges: [Change] = []
    var speakingChanges: [Change] = []
    var fillStart: Int64 = 0
    /// The second half of the fill as planned (members / join rate): where listeners' received bytes per second are
    /// measured, over the same ten seconds for all of them (at 10,000 and 500/s) so a window's edges move the rate little.
    var steadyWindow: Range<Int64> = 0..<0
    var fillEnd: Int64 = 0
    var holdEnd: Int64 = 0
    var serverAtFillStart: ProcessSample?
    var serverAtFillEnd: ProcessSample?
    var serverAtHoldEnd: ProcessSample?
    var connectsBehind = 0
    var pingsAnswered = 0
    var closedCleanly = 0

    // The scenario's own state.
    var speakerMemberID: [UInt8]?
    var targetMemberID: [UInt8]?
    var targetIsSpeaker = false
    var speakerSpeaking = false
    private var nextToConnect = 0
    private var inFlight = 0
    private var openSockets = 0
    private var closeDeadline: Int64 = 0
    private let nanosecondsPerJoin: Double

    init(options: Options, address: SocketAddress, roomID: String, namePrefix: String, tokens: [String]) throws(SystemError) {
        self.options = options
        self.address = address
        self.roomID = roomID
        self.namePrefix = namePrefix
        loop = try EventLoop(name: "bench-audience")
        nanosecondsPerJoin = 1e9 / options.joinRate
        clients = tokens.enumerated().map { index, token in
            let role: AudienceClient.Role = switch index { case 0: .moderator; case 1: .speaker; case 2: .target; default: .listener }
            return AudienceClient(index: index, token: token, role: role, scenario: self)
        }
    }

    var moderator: AudienceClient { clients[0] }
    var phase: Phase { Phase(rawValue: progress.phase.load(ordering: .relaxed)) ?? .done }

    func start() {
        loop.start()
        loop.execute { [self] in
            fillStart = Clock.now()
            let plan = Int64(Double(clients.count - 1) / options.joinRate * 1e9)
            steadyWindow = (fillStart + plan / 2)..<(fillStart + plan)
            serverAtFillStart = options.serverPID.flatMap { ProcessSample.read(pid: $0) }
            tick()
        }
    }

    func waitUntilFinished() { loop.waitUntilStopped() }

    /// Every millisecond: opens the connections that are due, and moves the run along its phases.
    private func tick() {
        let now = Clock.now()
        switch phase {
        case .fill:
            connectDue(now: now)
            if progress.joined.load(ordering: .relaxed) + progress.failed.load(ordering: .relaxed) == clients.count {
                fillEnd = now
                serverAtFillEnd = options.serverPID.flatMap { ProcessSample.read(pid: $0) }
                progress.phase.store(Phase.hold.rawValue, ordering: .relaxed)
            }
        case .hold:
            if now - fillEnd >= Int64(options.duration * 1e9) {
                holdEnd = now
                serverAtHoldEnd = options.serverPID.flatMap { ProcessSample.read(pid: $0) }
                beginClose(now: now)
            }
        case .close:
            if openSockets == 0 || now > closeDeadline {
                for client in clients where client.hasSocket {
                    error("close timeout")
                    closeSocket(client)
                }
                progress.phase.store(Phase.done.rawValue, ordering: .relaxed)
                loop.stop()
                return
            }
        case .done:
            return
        }
        loop.schedule(after: .milliseconds(1)) { [unowned self] in tick() }
    }

    /// Client k connects at fillStart + k / join rate; at most 1,000 at once between connect and join reply.
    private func connectDue(now: Int64) {
        let due = min(clients.count, Int(Double(now - fillStart) / nanosecondsPerJoin) + 1)
        while nextToConnect < due {
            guard inFlight < 1_000 else {
                connectsBehind = max(connectsBehind, due - nextToConnect)
                return
            }
            let client = clients[nextToConnect]
            nextToConnect += 1
            client.state = .connecting
            client.pending = loop.connect(to: address, handler: client)
            inFlight += 1
            openSockets += 1
        }
    }

    // MARK: Sockets

    func connected(_ client: AudienceClient) {
        client.state = .handshaking
        client.writeUpgradeRequest(token: client.token, host: options.host, port: options.port, random: &random)
    }

    func connectFailed(_ client: AudienceClient, _ failure: SystemError) {
        client.pending = nil
        openSockets -= 1
        fail(client, "connect: \(String(cString: strerror(failure.errno)))")
    }

    func reachedEnd(_ client: AudienceClient) {
        if client.state == .closing {
            closedCleanly += 1
            closeSocket(client)
            client.state = .closed
        } else {
            fail(client, "connection lost (\(client.state))")
        }
    }

    func connectionClosed(_ client: AudienceClient) {
        guard client.connection != nil else { return }
        client.connection = nil
        openSockets -= 1
        if client.state != .closing { fail(client, "write failed (\(client.state))") }
    }

    func closeSocket(_ client: AudienceClient) {
        if client.releaseSocket() { openSockets -= 1 }
    }

    func fail(_ client: AudienceClient, _ kind: String) {
        error(kind)
        let joining = [.connecting, .handshaking, .awaitingSession, .joining].contains(client.state)
        if joining {
            inFlight -= 1
            progress.failed.add(1, ordering: .relaxed)
        } else if client.state == .joined {
            progress.joined.subtract(1, ordering: .relaxed)
        }
        closeSocket(client)
        client.state = .failed
    }

    func error(_ kind: String) { errors[kind, default: 0] += 1 }

    func send(_ client: AudienceClient, _ type: String, _ body: String = "") {
        let tid = client.nextTID
        client.nextTID += 1
        let text = "{\"type\":\"\(type)\",\"tid\":\"\(tid)\",\"body\":{\"cid\":\"\(roomID)\"\(body)}}"
        client.connection?.write(WebSocketFrameEncoder.text(text, mask: random.mask()))
    }

    private func beginClose(now: Int64) {
        progress.phase.store(Phase.close.rawValue, ordering: .relaxed)
        closeDeadline = now + 5_000_000_000
        for client in clients where client.hasSocket {
            if client.state != .joined {
                fail(client, "not joined at the end (\(client.state))")
                continue
            }
            client.state = .closing
            client.connection?.write(WebSocketFrameEncoder.close(code: WebSocketCloseCode.normal, mask: random.mask()))
        }
    }

    /// A member's join reply arrived.
    func joined(_ client: AudienceClient, memberID: [UInt8]?, now: Int64) {
        inFlight -= 1
        client.state = .joined
        client.joinedAt = now
        progress.joined.add(1, ordering: .relaxed)
        switch client.role {
        case .speaker:
            speakerMemberID = memberID
            if let memberID { send(moderator, "member:role", ",\"member_id\":\"\(String(decoding: memberID, as: UTF8.self))\",\"role\":\"speaker\"") }
        case .target:
            targetMemberID = memberID
            loop.schedule(after: .milliseconds(Int(options.roleInterval * 1000))) { [unowned self] in changeRole() }
        case .moderator, .listener:
            break
        }
    }

    // MARK: The stage's changes

    /// The speaker was promoted: it turns its audio on and starts flipping its speaking state.
    func speakerPromoted() {
        let speaker = clients[1]
        send(speaker, "audio:enable")
        loop.schedule(after: .milliseconds(Int(options.speakingInterval * 1000))) { [unowned self] in flipSpeaking() }
    }

    private func flipSpeaking() {
        guard phase == .fill || phase == .hold else { return }
        speakerSpeaking.toggle()
        speakingChanges.append(Change(sentAt: Clock.now(), joinedWhenSent: progress.joined.load(ordering: .relaxed), afterFill: phase == .hold))
        send(clients[1], speakerSpeaking ? "audio:speaking:on" : "audio:speaking:off")
        loop.schedule(after: .milliseconds(Int(options.speakingInterval * 1000))) { [unowned self] in flipSpeaking() }
    }

    private func changeRole() {
        guard phase == .fill || phase == .hold, let targetMemberID else { return }
        targetIsSpeaker.toggle()
        roleChanges.append(Change(sentAt: Clock.now(), joinedWhenSent: progress.joined.load(ordering: .relaxed), afterFill: phase == .hold))
        send(moderator, "member:role",
             ",\"member_id\":\"\(String(decoding: targetMemberID, as: UTF8.self))\",\"role\":\"\(targetIsSpeaker ? "speaker" : "listener")\"")
        loop.schedule(after: .milliseconds(Int(options.roleInterval * 1000))) { [unowned self] in changeRole() }
    }
}
