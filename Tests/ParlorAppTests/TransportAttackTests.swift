#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec
import Testing

/// Attacks on the transport against the real `parlor` binary, with memory and CPU read from /proc (issue 17).
@Suite struct TransportAttackTests {
    /// Sends `bytes` without blocking until all are out or `seconds` pass (a server that stops reading stalls it).
    /// Returns the bytes sent.
    static func sendWithoutBlocking(_ connection: RawConnection, _ bytes: [UInt8], for seconds: Double) -> Int {
        let flags = fcntl(connection.fd, F_GETFL)
        _ = fcntl(connection.fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(connection.fd, F_SETFL, flags) }
        let deadline = Date().addingTimeInterval(seconds)
        var offset = 0
        while offset < bytes.count, Date() < deadline {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 { offset += sent } else if errno == EAGAIN || errno == EWOULDBLOCK { usleep(5_000) } else { break }
        }
        return offset
    }

    /// Sends `bytes` to every connection without blocking, round-robin, until `done` holds or `seconds` pass; the
    /// rest stays unsent. Whether `done` held.
    static func sendUntil(_ connections: [RawConnection], _ bytes: [UInt8], within seconds: Double, _ done: () throws -> Bool) -> Bool {
        let flags = connections.map { fcntl($0.fd, F_GETFL) }
        for (connection, flag) in zip(connections, flags) { _ = fcntl(connection.fd, F_SETFL, flag | O_NONBLOCK) }
        defer { for (connection, flag) in zip(connections, flags) { _ = fcntl(connection.fd, F_SETFL, flag) } }
        var offsets = connections.map { _ in 0 }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if (try? done()) == true { return true }
            var progressed = false
            for index in connections.indices where offsets[index] < bytes.count {
                let sent = bytes[offsets[index]...].withUnsafeBytes { Glibc.send(connections[index].fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent > 0 { offsets[index] += sent; progressed = true }
            }
            if !progressed { usleep(20_000) }
        }
        return (try? done()) == true
    }

    /// parlor_rate_limited_total{limit="output"}: WebSocket clients closed for not reading their output.
    static func slowConsumersClosed(port: Int, admin: String) throws -> Int {
        let response = try RawConnection.oneRequest(port, "GET", "/metrics", headers: ["Authorization": "Bearer \(admin)"])
        let prefix = #"parlor_rate_limited_total{limit="output"} "#
        let line = String(decoding: response.body, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(prefix) }
        return line.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    /// A token from the server's POST /auth (open mode).
    static func authToken(port: Int, name: String) throws -> String {
        let connection = try RawConnection(port: port)
        let body = #"{"name":"\#(name)"}"#
        try connection.send("POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        guard let jwt = try connection.readResponse().object["jwt"] as? String else { throw TestFailure("POST /auth gave no jwt") }
        return jwt
    }

    /// The server's close code, or nil if it sends none within `seconds` (its pings alone never end the wait).
    static func closeCode(_ socket: TestWebSocket, within seconds: Double) throws -> UInt16? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if case .close(let code, _) = try socket.nextMessage() { return code }
        }
        return nil
    }

    @Test func floodOfEmptyFragmentsIsClosedWith1008() throws {
        let server = try ServerProcess()
        let flooders = try (0..<2).map { try TestWebSocket(port: server.port, token: try Self.authToken(port: server.port, name: "flooder\($0)")) }
        let mask: WebSocketFrameEncoder.Mask = (1, 2, 3, 4)
        var fragments = WebSocketFrameEncoder.frame(.text, payload: [UInt8](), fin: false, mask: mask)
        let continuation = WebSocketFrameEncoder.frame(.continuation, payload: [UInt8](), fin: false, mask: mask)
        for _ in 0..<20_000 { fragments += continuation }
        let before = try server.cpuSeconds()
        for flooder in flooders { _ = Self.sendWithoutBlocking(flooder.connection, fragments, for: 1) }
        for flooder in flooders { #expect(try Self.closeCode(flooder, within: 5) == 1008) }
        let spent = try server.cpuSeconds() - before
        #expect(spent < 0.5, "the server used \(spent) CPU seconds on 40,000 empty fragments")
        // Ordinary clients are unaffected.
        let polite = try TestWebSocket(port: server.port, token: try Self.authToken(port: server.port, name: "polite"))
        try polite.sync()
    }

    @Test func pipelinedRequestsFromAClientThatNeverReadsAreBounded() throws {
        let server = try ServerProcess()
        let warmUp = try RawConnection(port: server.port)
        try warmUp.send("GET /rtc.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try warmUp.readResponse().status == 200)
        let baseline = try server.residentBytes()

        let request = Array("GET /rtc.js HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let flood = [UInt8]([[UInt8]](repeating: request, count: 1_000_000 / request.count).joined())
        var attackers: [RawConnection] = []
        var peak = baseline
        for _ in 0..<5 {
            let attacker = try RawConnection(port: server.port)
            attackers.append(attacker)
            _ = Self.sendWithoutBlocking(attacker, flood, for: 1)
            peak = max(peak, try server.residentBytes())
        }
        // Give the server time to do whatever it would do with what it did read (a debug build is slow at it).
        for _ in 0..<100 {
            usleep(20_000)
            peak = max(peak, try server.residentBytes())
        }
        #expect(!ServerProcess.checksMemory || peak <= baseline + 64 * ServerProcess.mebibyte, "RSS grew by \((peak - baseline) / ServerProcess.mebibyte) MiB")

        attackers.removeAll()
        let returned = try !ServerProcess.checksMemory || server.eventually { try server.residentBytes() <= baseline + 32 * ServerProcess.mebibyte }
        let after = try server.residentBytes()
        #expect(returned, "RSS stayed \((after - baseline) / ServerProcess.mebibyte) MiB above the baseline")

        // Still serving, and a pipelining client that does read gets every response.
        let reader = try RawConnection(port: server.port)
        try reader.send(Array([[UInt8]](repeating: request, count: 200).joined()))
        for _ in 0..<200 { #expect(try reader.readResponse().status == 200) }
    }

    @Test(.disabled(if: !ServerProcess.checksMemory, "RSS under a sanitizer's allocator"))
    func memoryOfALargeOutputQueueReturnsAfterTheConnectionCloses() throws {
        // An output limit high enough that one pipelining client makes the server queue a lot: 12,000 of one of the
        // larger web client files (about 13 KB) are ~150 MB.
        let server = try ServerProcess(["--max-output-bytes", "268435456"])
        let warmUp = try RawConnection(port: server.port)
        try warmUp.send("GET /rtc.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let file = try warmUp.readResponse()
        #expect(file.status == 200)
        #expect(file.body.count >= 10_000, "rtc.js shrank to \(file.body.count) bytes: pick a larger file for this test")
        let baseline = try server.residentBytes()
        let request = Array("GET /rtc.js HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var attacker: RawConnection? = try RawConnection(port: server.port)
        _ = Self.sendWithoutBlocking(attacker!, Array([[UInt8]](repeating: request, count: 12_000).joined()), for: 1)
        let grew = try server.eventually { try server.residentBytes() >= baseline + 96 * ServerProcess.mebibyte }
        #expect(grew, "the server did not queue the responses (RSS +\((try? server.residentBytes()).map { ($0 - baseline) >> 20 } ?? -1) MiB)")
        attacker = nil
        let returned = try server.eventually(timeout: 5) { try server.residentBytes() <= baseline + 32 * ServerProcess.mebibyte }
        let after = try server.residentBytes()
        #expect(returned, "RSS stayed \((after - baseline) / ServerProcess.mebibyte) MiB above the baseline after the close")
    }

    @Test func runningOutOfDescriptorsDoesNotSpinTheAcceptLoop() throws {
        let server = try ServerProcess(prefix: ["prlimit", "--nofile=256", "--"])
        var held: [RawConnection] = []
        for _ in 0..<300 { held.append(try RawConnection(port: server.port)) }
        // Let the server reach its limit and settle, then measure what being out of descriptors costs.
        #expect(server.eventually { (try? server.openDescriptorCount()).map { $0 >= 240 } ?? false })
        usleep(200_000)
        let before = try server.cpuSeconds()
        usleep(2_000_000)
        let spent = try server.cpuSeconds() - before
        #expect(spent < 0.5, "the server used \(spent) CPU seconds in 2 s while out of descriptors")

        held.removeAll()
        let started = Date()
        let client = try RawConnection(port: server.port, timeout: 5)
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        #expect(Date().timeIntervalSince(started) < 2)

        // Logged once, not once per refused client.
        kill(server.pid, SIGTERM)
        #expect(server.child.waitForExit() == 0)
        let log = server.child.errorOutput()
        #expect(log.components(separatedBy: "out of file descriptors").count - 1 == 1, "\(log)")
    }

    @Test func slowRequestBodiesAreClosedAfterTheBodyTimeout() throws {
        let server = try ServerProcess(["--body-timeout", "1"])
        let baseline = try server.residentBytes()
        var slow: [RawConnection] = []
        for _ in 0..<200 {
            let connection = try RawConnection(port: server.port, timeout: 5)
            try connection.send("POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n{")
            slow.append(connection)
        }
        var peak = try server.residentBytes()
        // One more byte a connection every 200 ms: each keeps the connection active, none completes a body.
        let started = Date()
        var open = slow
        while !open.isEmpty, Date().timeIntervalSince(started) < 4 {
            open = open.filter { connection in
                var probe: UInt8 = 0
                let peeked = recv(connection.fd, &probe, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
                // An answer (the 408), the end of the stream or an error: the server has given up on it.
                if peeked >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { return false }
                return Glibc.send(connection.fd, " ", 1, Int32(MSG_NOSIGNAL)) == 1
            }
            peak = max(peak, try server.residentBytes())
            usleep(200_000)
        }
        #expect(open.isEmpty, "\(open.count) slow bodies still unanswered after 4 s with --body-timeout 1")
        #expect(!ServerProcess.checksMemory || peak <= baseline + 64 * ServerProcess.mebibyte)
        // Each got a 408 JSON error, then the close.
        for connection in slow {
            let response = try connection.readResponse()
            #expect(response.status == 408 && response.errorCode == "http:error:body-timeout")
            #expect(try connection.waitForClose())
        }
        slow.removeAll()
        #expect(try !ServerProcess.checksMemory || server.eventually { try server.residentBytes() <= baseline + 32 * ServerProcess.mebibyte })
    }

    @Test func slowConsumerThatKeepsSendingStillReadsItsCloseFrame() throws {
        let admin = "admin-token-for-the-slow-consumer-test"
        // --pong-timeout also bounds how long a closing connection waits for its peer to read the close frame: the
        // first client closed may wait for the third.
        let server = try ServerProcess(["--max-output-bytes", "16384", "--message-rate", "0", "--frame-rate", "0", "--admin-token", admin,
                                        "--pong-timeout", "120"])
        let mask: WebSocketFrameEncoder.Mask = (9, 8, 7, 6)
        let ping = WebSocketFrameEncoder.frame(.ping, payload: [UInt8](repeating: 0x61, count: 125), mask: mask)
        // 6.3 MB of pongs each: more than the server's socket buffer (4 MiB at most here) and an unread client's
        // receive buffer hold, so the output limit trips once the server has answered them, however long that takes.
        let pings = [UInt8]([[UInt8]](repeating: ping, count: 50_000).joined())
        let request = WebSocketFrameEncoder.frame(.text, payload: Array(#"{"type":"session:ping","tid":"x"}"#.utf8), mask: mask)
        // Three runs side by side: each client's pongs pile up while it does not read, past the output limit.
        let sockets = try (0..<3).map { try TestWebSocket(port: server.port, token: try Self.authToken(port: server.port, name: "slow\($0)")) }
        // Until the server has closed all three (its slow-consumer count), not for a fixed time: on a loaded machine
        // it answers the pings slowly, and a client that started reading early would drain the pongs before the limit.
        let closedAll = Self.sendUntil(sockets.map(\.connection), pings, within: 60) {
            try Self.slowConsumersClosed(port: server.port, admin: admin) >= 3
        }
        #expect(closedAll, "the server did not close three slow consumers within 60 s")
        // Now each reads slowly, sending a request with each chunk read, as a busy client would, until its close frame.
        var decoders = sockets.map { _ in WebSocketDecoder(role: .client, maxFrameSize: 1 << 20, maxMessageSize: 1 << 20) }
        var closeCodes: [UInt16?] = sockets.map { _ in nil }
        var failures: [String?] = sockets.map { _ in nil }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        // A bound for a broken server, not a timing assertion: a loaded machine (sanitizers, CI) may need most of it.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, sockets.indices.contains(where: { closeCodes[$0] == nil && failures[$0] == nil }) {
            for index in sockets.indices where closeCodes[index] == nil && failures[index] == nil {
                let fd = sockets[index].connection.fd
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 {
                    failures[index] = count == 0 ? "end of stream before the close frame" : "recv failed with errno \(errno)"
                    continue
                }
                decoders[index].append(Array(chunk[0..<count]))
                while let message = try decoders[index].next() {
                    if case .close(let code, _) = message { closeCodes[index] = code }
                }
                _ = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            usleep(2_000)
        }
        #expect(failures.allSatisfy { $0 == nil }, "\(failures)")
        #expect(closeCodes == [1008, 1008, 1008])
    }
}
