#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec
import Synchronization

/// What every worker thread reads: the run's phase, progress counters, and the time each client last sent a churn
/// join (so whichever worker receives the matching member:joined can compute the fan-out latency).
final class Worker: @unchecked Sendable {  // all mutable state is confined to the worker's own thread
    let id: Int
    let settings: WorkerSettings
    let shared: SharedState
    var clients: [BenchClient]
    var stats = WorkerStats()
    let finished = DispatchSemaphore(value: 0)

    private var poller = Poller()
    private var random: FastRandom
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
    private var nextToStart = 0
    private var inFlight = 0
    private var churnStart: Int64 = 0
    private var churnCursor = 0
    private var closeStarted = false
    private var closeDeadline: Int64 = 0
    private var openSockets = 0
    private let ratePerNanosecond: Double

    init(id: Int, settings: WorkerSettings, shared: SharedState, clients: [BenchClient], workerCount: Int) {
        self.id = id
        self.settings = settings
        self.shared = shared
        self.clients = clients
        for (position, client) in clients.enumerated() { client.local = position }
        random = FastRandom(seed: UInt64(id + 1) &* 0x2545_F491_4F6C_DD1D ^ UInt64(Clock.now()))
        ratePerNanosecond = settings.churnRatePerSecond / Double(workerCount) / 1e9
    }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "bench-worker-\(id)"
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func run() {
        defer {
            poller.release()
            readBuffer.deallocate()
        }
        while true {
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
                    return
                }
            }
            let timeout: Int32 = phase == .churn ? 1 : 5
            poller.wait(timeoutMilliseconds: timeout) { mask, data in
                handleEvent(client: clients[Int(data)], mask: mask)
            }
        }
    }

    // MARK: Ramp

    private func startConnections() {
        while inFlight < settings.rampConcurrency, nextToStart < clients.count {
            let client = clients[nextToStart]
            let local = nextToStart
            nextToStart += 1
            let (fd, error) = Sockets.startConnect(host: settings.host, port: settings.port)
            guard fd >= 0 else {
                fail(client, "connect: \(String(cString: strerror(error)))")
                continue
            }
            client.fd = fd
            client.state = .connecting
            client.opSentAt = Clock.now()
            inFlight += 1
            openSockets += 1
            shared.openCount.add(1, ordering: .relaxed)
            poller.control(Epoll.add, fd, events: Epoll.input | Epoll.output, data: UInt64(local))
        }
    }

    private func fail(_ client: BenchClient, _ kind: String) {
        stats.error(kind)
        let wasRamping = [.connecting, .handshaking, .awaitingSession, .initialJoin].contains(client.state)
        if wasRamping { inFlight -= 1 }
        if client.state == .leaving || client.state == .rejoining { shared.outstandingOps.subtract(1, ordering: .relaxed) }
        if client.state == .notStarted || wasRamping { shared.failedCount.add(1, ordering: .relaxed) }
        if client.state == .joined || client.state == .leaving || client.state == .rejoining {
            shared.joinedCount.subtract(1, ordering: .relaxed)
        }
        closeSocket(client)
        client.state = .failed
    }

    private func closeSocket(_ client: BenchClient) {
        guard client.fd >= 0 else { return }
        poller.control(Epoll.delete, client.fd, events: 0, data: 0)
        close(client.fd)
        client.fd = -1
        openSockets -= 1
        shared.openCount.subtract(1, ordering: .relaxed)
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

    private func send(_ client: BenchClient, request type: String) {
        let tid = client.nextTID
        client.nextTID += 1
        let text = "{\"type\":\"\(type)\",\"tid\":\"\(tid)\",\"body\":{\"cid\":\"\(client.roomID)\"}}"
        write(client, WebSocketFrameEncoder.text(text, mask: random.mask()))
    }

    // MARK: Close

    private func beginClose(now: Int64) {
        closeStarted = true
        closeDeadline = now + Int64(settings.closeTimeoutSeconds * 1e9)
        for client in clients where client.fd >= 0 {
            if client.state == .connecting || client.state == .handshaking {
                fail(client, "closed before open")
                continue
            }
            if client.state == .leaving || client.state == .rejoining { stats.error("op timeout") }
            client.state = .closing
            write(client, WebSocketFrameEncoder.close(code: WebSocketCloseCode.normal, mask: random.mask()))
        }
    }

    private func abandonRemaining() {
        for client in clients where client.fd >= 0 {
            stats.error("close timeout")
            closeSocket(client)
        }
    }

    // MARK: I/O

    private func write(_ client: BenchClient, _ bytes: [UInt8]) {
        guard client.fd >= 0 else { return }
        if !client.output.isEmpty {
            client.output.append(contentsOf: bytes)
            return
        }
        let written = bytes.withUnsafeBytes { Glibc.write(client.fd, $0.baseAddress, $0.count) }
        if written == bytes.count { return }
        if written < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            if client.state != .closing { fail(client, "write: \(String(cString: strerror(errno)))") } else { closeSocket(client) }
            return
        }
        client.output.append(contentsOf: bytes[max(0, written)...])
        setWriteInterest(client, true)
    }

    private func setWriteInterest(_ client: BenchClient, _ wanted: Bool) {
        guard wanted != client.wantsWrite, client.fd >= 0 else { return }
        client.wantsWrite = wanted
        poller.control(Epoll.modify, client.fd, events: wanted ? Epoll.input | Epoll.output : Epoll.input, data: UInt64(client.local))
    }

    private func flushOutput(_ client: BenchClient) {
        while !client.output.isEmpty {
            let written = client.output.withUnsafeBytes { Glibc.write(client.fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                fail(client, "write: \(String(cString: strerror(errno)))")
                return
            }
            client.output.removeFirst(written)
        }
        setWriteInterest(client, false)
    }

    private func handleEvent(client: BenchClient, mask: UInt32) {
        guard client.fd >= 0 else { return }
        if client.state == .connecting {
            guard mask & (Epoll.output | Epoll.error | Epoll.hangUp) != 0 else { return }
            let error = Sockets.pendingError(client.fd)
            if error != 0 {
                fail(client, "connect: \(String(cString: strerror(error)))")
                return
            }
            client.state = .handshaking
            var key: [UInt8] = []
            for _ in 0..<16 { key.append(UInt8(truncatingIfNeeded: random.next())) }
            let request = "GET /ws?token=\(client.token) HTTP/1.1\r\nHost: \(settings.host):\(settings.port)\r\n"
                + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(Base64.encode(key))\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n"
            poller.control(Epoll.modify, client.fd, events: Epoll.input, data: UInt64(client.local))
            write(client, Array(request.utf8))
            return
        }
        if mask & Epoll.output != 0, !client.output.isEmpty { flushOutput(client) }
        guard client.fd >= 0, mask & (Epoll.input | Epoll.error | Epoll.hangUp) != 0 else { return }
        for _ in 0..<4 {
            guard client.fd >= 0 else { return }
            let count = read(client.fd, readBuffer.baseAddress, readBuffer.count)
            if count > 0 {
                received(client, UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
                if count < readBuffer.count { return }
            } else if count == 0 {
                reachedEnd(client)
                return
            } else {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                reachedEnd(client)
                return
            }
        }
    }

    private func reachedEnd(_ client: BenchClient) {
        if client.state == .closing {
            stats.closedCleanly += 1
            closeSocket(client)
            client.state = .closed
        } else {
            fail(client, "connection lost (\(client.state))")
        }
    }

    private func received(_ client: BenchClient, _ bytes: UnsafeRawBufferPointer) {
        if client.state == .handshaking {
            client.head.append(contentsOf: bytes)
            guard let end = HTTPBytes.headEnd(client.head) else {
                if client.head.count > 16384 { fail(client, "handshake: head too large") }
                return
            }
            let headText = String(decoding: client.head[0..<end], as: UTF8.self)
            guard HTTPBytes.status(headText) == 101 else {
                fail(client, "handshake: status \(HTTPBytes.status(headText).map(String.init) ?? "?")")
                return
            }
            let rest = Array(client.head[(end + 4)...])
            client.head = []
            client.state = .awaitingSession
            if !rest.isEmpty { decode(client, rest) }
            return
        }
        client.decoder.append(bytes)
        drainMessages(client)
    }

    private func decode(_ client: BenchClient, _ bytes: [UInt8]) {
        client.decoder.append(bytes)
        drainMessages(client)
    }

    private func drainMessages(_ client: BenchClient) {
        while client.fd >= 0 {
            let message: WebSocketMessage?
            do {
                message = try client.decoder.next()
            } catch {
                fail(client, "websocket: \(error.reason)")
                return
            }
            guard let message else { return }
            switch message {
            case .text(let text): handleText(client, text)
            case .binary: stats.error("binary message")
            case .ping(let payload):
                stats.pingsAnswered += 1
                write(client, WebSocketFrameEncoder.frame(.pong, payload: payload, mask: random.mask()))
            case .pong: break
            case .close(let code, let reason):
                if client.state == .closing {
                    stats.closedCleanly += 1
                    closeSocket(client)
                    client.state = .closed
                } else {
                    fail(client, "server closed \(code.map(String.init) ?? "-") \(reason)")
                }
                return
            }
        }
    }

    // MARK: Protocol

    private func handleText(_ client: BenchClient, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let type = Scan.value(of: Scan.typeKey, in: bytes) else {
                stats.error("message without type")
                return
            }
            let now = Clock.now()
            if Scan.hasPrefix(bytes, type, Scan.memberPrefix) {
                stats.eventsTotal += 1
                let inWindow = shared.currentPhase == .churn
                if inWindow { stats.eventsInWindow += 1 }
                if inWindow, Scan.equal(bytes, type, Scan.memberJoined),
                   let name = Scan.value(of: Scan.nameKey, in: bytes, from: type.upperBound),
                   let joiner = Scan.trailingNumber(bytes, name), joiner != client.index, joiner < shared.clientCount {
                    let sentAt = shared.joinSentAt[joiner]
                    if sentAt > 0, now >= sentAt { stats.fanOut.append(now - sentAt) }
                }
                return
            }
            switch client.state {
            case .awaitingSession:
                guard Scan.equal(bytes, type, Scan.sessionSuccess) else {
                    fail(client, "unexpected first message")
                    return
                }
                client.state = .initialJoin
                client.opSentAt = now
                send(client, request: "conversation:join")
            case .initialJoin:
                if Scan.equal(bytes, type, Scan.joinSuccess) {
                    stats.initialJoinRTT.append(now - client.opSentAt)
                    client.state = .joined
                    inFlight -= 1
                    shared.joinedCount.add(1, ordering: .relaxed)
                } else {
                    fail(client, "initial join: \(errorCode(bytes))")
                }
            case .leaving:
                if Scan.equal(bytes, type, Scan.leaveSuccess) {
                    client.state = .rejoining
                    client.opSentAt = now
                    shared.joinSentAt[client.index] = now
                    send(client, request: "conversation:join")
                } else {
                    stats.error("leave: \(errorCode(bytes))")
                    client.state = .joined
                    shared.outstandingOps.subtract(1, ordering: .relaxed)
                }
            case .rejoining:
                shared.outstandingOps.subtract(1, ordering: .relaxed)
                if Scan.equal(bytes, type, Scan.joinSuccess) {
                    stats.joinRTT.append(now - client.opSentAt)
                    stats.joinSentOffset.append(client.opSentAt - churnStart)
                    client.state = .joined
                } else {
                    stats.error("join: \(errorCode(bytes))")
                    shared.joinedCount.subtract(1, ordering: .relaxed)
                    client.state = .failed
                }
            case .closing:
                break
            default:
                stats.error("unexpected \(String(decoding: UnsafeBufferPointer(rebasing: bytes[type]), as: UTF8.self))")
            }
        }
    }

    private func errorCode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard let code = Scan.value(of: Scan.codeKey, in: bytes) else { return "?" }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[code]), as: UTF8.self)
    }
}

/// Byte-level lookups in the server's compact JSON: no allocation per message.
