#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorCodec
import ParlorHTTP
import ParlorLoop
import Testing

/// Autobahn 9 (large and many messages, fragmented and chopped), the heartbeat, slow consumers, and bad protocol input.
@Suite struct WebSocketConformanceRobustnessTests {
    private static func largeLimits(_ c: inout AppConfiguration) {
        c.http.webSocket.maxFrameBytes = 2 << 20
        c.http.webSocket.maxMessageBytes = 2 << 20
        c.maxRequestBytes = 2 << 20
    }

    // MARK: Autobahn 9: large and many messages

    @Test(arguments: [64 << 10, 256 << 10, 1 << 20])
    func largeTextMessageInOneFrame(length: Int) throws {
        try withServer(Self.largeLimits) { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.text, Conformance.paddedPing(tid: "big\(length)", length: length))
            try Conformance.expectPingReply(socket, tid: "big\(length)")
        }
    }

    @Test func largeBinaryMessage() throws {
        try withServer(Self.largeLimits) { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.binary, (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) })
            #expect(try Conformance.nextErrorCode(socket) == "request:error:binary-unsupported")
        }
    }

    @Test(arguments: [64, 256, 1024, 4096, 16384, 65536, 262_144])
    func largeTextMessageInFragments(fragmentSize: Int) throws {
        try withServer(Self.largeLimits) { app in
            let socket = try Conformance.client(app)
            let tid = "frag\(fragmentSize)"
            let message = Conformance.paddedPing(tid: tid, length: 256 << 10)
            var bytes: [UInt8] = []
            for start in stride(from: 0, to: message.count, by: fragmentSize) {
                let end = min(start + fragmentSize, message.count)
                bytes += WebSocketFrameEncoder.frame(start == 0 ? .text : .continuation, payload: Array(message[start..<end]),
                                                     fin: end == message.count, mask: Conformance.mask)
            }
            try socket.connection.send(bytes)
            try Conformance.expectPingReply(socket, tid: tid)
        }
    }

    @Test(arguments: [1, 64, 1000, 16384])
    func largeTextMessageChoppedIntoWrites(chopSize: Int) throws {
        try withServer(Self.largeLimits) { app in
            let socket = try Conformance.client(app)
            let tid = "chop\(chopSize)"
            // One-byte writes of a smaller message keep the test quick.
            let length = chopSize == 1 ? 4096 : 256 << 10
            let frame = WebSocketFrameEncoder.frame(.text, payload: Conformance.paddedPing(tid: tid, length: length), mask: Conformance.mask)
            for start in stride(from: 0, to: frame.count, by: chopSize) {
                try socket.connection.send(Array(frame[start..<min(start + chopSize, frame.count)]))
            }
            try Conformance.expectPingReply(socket, tid: tid)
        }
    }

    @Test func manySmallMessagesAreAnsweredInOrder() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let count = 1000
            var bytes: [UInt8] = []
            for index in 0..<count {
                bytes += WebSocketFrameEncoder.frame(.text, payload: Conformance.ping(tid: "m\(index)"), mask: Conformance.mask)
            }
            try socket.connection.send(bytes)
            var received: [String] = []
            while received.count < count {
                guard case .text(let text) = try socket.nextMessage() else { continue }
                guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                      object["type"] as? String == "session:ping:success", let tid = object["tid"] as? String else { continue }
                received.append(tid)
            }
            #expect(received == (0..<count).map { "m\($0)" })
        }
    }

    // MARK: Heartbeat

    private static func fastHeartbeat(_ c: inout AppConfiguration) {
        c.http.webSocket.pingInterval = .milliseconds(100)
        c.http.webSocket.pongTimeout = .milliseconds(400)
    }

    @Test func clientThatAnswersPingsStaysConnected() throws {
        try withServer(Self.fastHeartbeat) { app in
            let socket = try Conformance.client(app)
            socket.connection.setTimeout(1)
            let start = Date()
            var pings = 0
            // nextMessage answers every ping it reads.
            while Date().timeIntervalSince(start) < 1.2 {
                if case .ping = try socket.nextMessage() { pings += 1 }
            }
            #expect(pings >= 3)
            _ = try socket.call("session:ping")
        }
    }

    /// A peer heard from within the interval is not pinged (its frames show it is there); once it falls silent
    /// the pings come back.
    @Test func talkingClientIsNotPingedUntilItFallsSilent() throws {
        // A 1 s interval (not fastHeartbeat's 100 ms): under `make tsan` one request's round trip can take longer
        // than 100 ms, and the client would really have been silent for an interval.
        try withServer({ c in
            c.http.webSocket.pingInterval = .seconds(1)
            c.http.webSocket.pongTimeout = .seconds(2)
        }) { app in
            let socket = try Conformance.client(app)
            socket.connection.setTimeout(3)
            var pingsWhileTalking = 0
            let start = Date()
            var sent = 0
            // A request every 30 ms for three seconds: three ping intervals, none of them silent.
            while Date().timeIntervalSince(start) < 3 {
                try socket.sendText(#"{"type":"session:ping","tid":"t\#(sent)","body":{}}"#)
                sent += 1
                while true {
                    let message = try socket.nextMessage()
                    if case .ping = message { pingsWhileTalking += 1 }
                    if case .text(let text) = message, text.contains("session:ping:success") { break }
                }
                Thread.sleep(forTimeInterval: 0.03)
            }
            #expect(sent >= 10)
            #expect(pingsWhileTalking == 0)
            // Silent from here: the next frame is a ping (answered by nextMessage), an interval after the last request.
            guard case .ping = try socket.nextMessage() else {
                Issue.record("a silent client was not pinged")
                return
            }
        }
    }

    /// Unsolicited pongs show the peer is there but put nothing on the path towards it, which a proxy may time
    /// out: such a peer is still pinged every interval.
    @Test func clientThatOnlySendsPongsIsStillPinged() throws {
        try withServer(Self.fastHeartbeat) { app in
            let socket = try Conformance.client(app)
            let start = Date()
            // Five intervals of a pong every 30 ms, reading nothing.
            while Date().timeIntervalSince(start) < 0.5 {
                try socket.sendFrame(.pong, [])
                Thread.sleep(forTimeInterval: 0.03)
            }
            // The pings sent meanwhile are already here; under a rule that skips them the next would be an
            // interval away.
            socket.connection.setTimeout(0.05)
            guard case .ping = try socket.nextMessage() else {
                Issue.record("no ping reached a client that only sends pongs")
                return
            }
        }
    }

    @Test func silentClientIsDisconnected() throws {
        try withServer(Self.fastHeartbeat) { app in
            let jwt = try token(app, "silent")
            // The server's silence clock starts at the upgrade, after this.
            let start = Date()
            let socket = try TestWebSocket(port: app.port, token: jwt)
            // Read whatever comes (pings included) without ever answering.
            #expect(try Conformance.endsTCP(socket.connection, within: 2))
            let elapsed = Date().timeIntervalSince(start)
            #expect(elapsed >= 0.4 && elapsed < 1.5, "closed after \(elapsed) s")
            #expect(Conformance.eventually(within: 2) { app.server.openConnectionCount == 0 })
        }
    }

    // MARK: Slow consumers

    private static func smallOutputQueue(_ c: inout AppConfiguration) {
        c.http.webSocket.maxPendingOutputBytes = 4096
    }

    /// WebSocket connections the server still counts as open (no close sent yet), over all its loops.
    private static func openSockets(_ app: ParlorApplication) -> Int {
        app.server.group.loops.reduce(0) { total, loop in
            total + loop.submitAndWait { loop.openConnections().filter { $0.handler is WebSocketConnection }.count }
        }
    }

    /// Sends `batch` over and over without reading anything, until the server has given up on the socket (it sent
    /// its close), 48 MiB have gone out or 20 s have passed. Returns whether the server gave up. (About 8 MiB, what
    /// the kernel buffers on both sides hold, is enough for a server that enforces its limit.)
    private static func flood(_ app: ParlorApplication, _ socket: TestWebSocket, _ batch: [UInt8]) -> Bool {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(socket.connection.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let deadline = Date().addingTimeInterval(20)  // the loop ends once the server gives up: seconds, except under make tsan
        var sent = 0
        while openSockets(app) > 0, Date() < deadline, sent < 48 << 20 {
            guard (try? socket.connection.send(batch)) != nil else { break }
            sent += batch.count
        }
        return Conformance.eventually(within: 5) { openSockets(app) == 0 }
    }

    /// About 64 KiB of session:ping requests whose replies are about as large: few big requests, so that the
    /// server's per-request work does not limit how fast output piles up.
    private static let requestBatch: [UInt8] = {
        let one = WebSocketFrameEncoder.frame(.text, payload: Conformance.ping(tid: String(repeating: "s", count: 16_000)),
                                              mask: Conformance.mask)
        return Array(repeating: one, count: 65536 / one.count).flatMap { $0 }
    }()

    /// About 64 KiB of pings with full 125-byte payloads.
    private static let pingBatch: [UInt8] = {
        let one = WebSocketFrameEncoder.frame(.ping, payload: [UInt8](repeating: 0x50, count: 125), mask: Conformance.mask)
        return Array(repeating: one, count: 65536 / one.count).flatMap { $0 }
    }()

    @Test func clientThatDoesNotReadRepliesIsClosedWith1008() throws {
        try withServer(Self.smallOutputQueue) { app in
            let socket = try Conformance.client(app)
            #expect(Self.flood(app, socket, Self.requestBatch), "the server never gave up on a client that does not read")
            // Reading now: the replies that were already on their way, then the close, then the end.
            #expect(try Conformance.closeCode(socket) == 1008)
            #expect(try Conformance.endsTCP(socket.connection))
            let fresh = try Conformance.client(app)
            _ = try fresh.call("session:ping")
            #expect(Conformance.eventually(within: 3) { app.server.openConnectionCount == 1 })
        }
    }

    @Test func clientThatDoesNotReadPongsIsClosedWith1008() throws {
        try withServer(Self.smallOutputQueue) { app in
            let socket = try Conformance.client(app)
            #expect(Self.flood(app, socket, Self.pingBatch), "the server never gave up on a client that does not read pongs")
            #expect(try Conformance.closeCode(socket) == 1008)
            #expect(try Conformance.endsTCP(socket.connection))
            let fresh = try Conformance.client(app)
            _ = try fresh.call("session:ping")
        }
    }

    @Test func clientThatNeverReadsIsDisconnected() throws {
        try withServer({ c in
            Self.smallOutputQueue(&c)
            c.http.webSocket.pongTimeout = .milliseconds(300)
        }) { app in
            let socket = try Conformance.client(app)
            #expect(Self.flood(app, socket, Self.requestBatch))
            // Not reading at all: the close frame cannot be delivered, so the server must drop the socket on its own.
            #expect(Conformance.eventually(within: 3) { app.server.openConnectionCount == 0 },
                    "a client that never reads still holds its connection")
            let fresh = try Conformance.client(app)
            _ = try fresh.call("session:ping")
            withExtendedLifetime(socket) {}
        }
    }

    // MARK: Bad protocol input keeps the connection usable

    @Test func badRequestsGetErrorsAndTheConnectionStaysUsable() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let cases: [(String, String, String, String?)] = [
                ("truncated JSON", #"{"type":"#, "request:error:invalid-json", nil),
                ("not JSON", "hello", "request:error:invalid-json", nil),
                ("trailing comma", #"{"type":"session:ping","tid":"c",}"#, "request:error:invalid-json", nil),
                ("array", #"[{"type":"session:ping"}]"#, "request:error:invalid-json", nil),
                ("string", #""session:ping""#, "request:error:invalid-json", nil),
                ("number", "42", "request:error:invalid-json", nil),
                ("null", "null", "request:error:invalid-json", nil),
                ("unknown type", #"{"type":"session:dance","tid":"u"}"#, "request:error:unknown-type", "u"),
                ("missing type", #"{"tid":"m","body":{}}"#, "request:error:missing-field", "m"),
                ("type not a string", #"{"type":7,"tid":"t"}"#, "request:error:invalid-field", "t"),
                ("tid an object", #"{"type":"session:ping","tid":{"a":1}}"#, "request:error:invalid-field", nil),
                ("body an array", #"{"type":"session:ping","tid":"b","body":[1]}"#, "request:error:invalid-field", "b"),
                ("body a string", #"{"type":"conversation:join","tid":"s","body":"room"}"#, "request:error:invalid-field", "s"),
                ("cid a number", #"{"type":"conversation:join","tid":"n","body":{"cid":5}}"#, "request:error:invalid-field", "n"),
                ("cid missing", #"{"type":"conversation:join","tid":"x","body":{}}"#, "request:error:missing-field", "x"),
                ("cid empty", #"{"type":"conversation:leave","tid":"e","body":{"cid":""}}"#, "request:error:invalid-field", "e"),
            ]
            for (index, (label, text, code, tid)) in cases.enumerated() {
                try socket.sendText(text)
                let reply = try socket.next { $0["type"] as? String == "error" || $0["type"] as? String == "session:ping:success" }
                #expect(errorCode(reply) == code, "\(label): \(reply)")
                if let tid { #expect(reply["tid"] as? String == tid, "\(label): tid") }
                try socket.sendFrame(.text, Conformance.ping(tid: "ok\(index)"))
                try Conformance.expectPingReply(socket, tid: "ok\(index)", "after \(label)")
            }
            try socket.sendFrame(.binary, Array("{\"type\":\"session:ping\"}".utf8))
            #expect(try Conformance.nextErrorCode(socket) == "request:error:binary-unsupported")
            try socket.sendFrame(.text, Conformance.ping(tid: "after-binary"))
            try Conformance.expectPingReply(socket, tid: "after-binary")
        }
    }

    @Test func oversizedRequestIsRefusedAndTheConnectionStaysUsable() throws {
        try withServer { app in
            let limit = app.configuration.maxRequestBytes
            #expect(limit < app.configuration.http.webSocket.maxMessageBytes)
            let socket = try Conformance.client(app)
            try socket.sendFrame(.text, Conformance.paddedPing(tid: "huge", length: limit + 1))
            #expect(try Conformance.nextErrorCode(socket) == "request:error:too-large")
            // Fragmented the same way.
            let oversized = Conformance.paddedPing(tid: "huge2", length: app.configuration.http.webSocket.maxMessageBytes)
            try socket.sendFrame(.text, Array(oversized[..<1000]), fin: false)
            try socket.sendFrame(.continuation, Array(oversized[1000...]))
            #expect(try Conformance.nextErrorCode(socket) == "request:error:too-large")
            // Exactly the limit is fine.
            try socket.sendFrame(.text, Conformance.paddedPing(tid: "limit", length: limit))
            try Conformance.expectPingReply(socket, tid: "limit")
        }
    }
}
