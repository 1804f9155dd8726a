#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorCodec
import Testing

// Helpers for the WebSocketConformance suites: Autobahn|Testsuite cases, translated to Parlor. The server has no
// echo, so every case is observed through the JSON protocol (a session:ping request must be answered) or through
// the close code the server sends.

/// Helpers shared by the WebSocketConformance suites.
enum Conformance {
    /// The key of RFC 6455 §1.3's example, whose accept value is known.
    static let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="
    static let sampleAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    /// A fixed client masking key, for frames built by hand.
    static let mask: WebSocketFrameEncoder.Mask = (0x37, 0xFA, 0x21, 0x3D)

    /// `{"type":"session:ping","tid":"<tid>"}`.
    static func ping(tid: String) -> [UInt8] {
        Array(#"{"type":"session:ping","tid":"\#(tid)"}"#.utf8)
    }

    /// A session:ping request padded with JSON whitespace (space, tab, LF, CR) to exactly `length` bytes.
    static func paddedPing(tid: String, length: Int) -> [UInt8] {
        let head = Array(#"{"type":"session:ping","tid":"\#(tid)""#.utf8)
        precondition(length > head.count, "\(length) bytes cannot hold a session:ping")
        let whitespace: [UInt8] = [0x20, 0x09, 0x0A, 0x0D]
        return head + (0..<(length - head.count - 1)).map { whitespace[$0 % 4] } + [UInt8(ascii: "}")]
    }

    /// A masked frame whose first byte (FIN, RSV1-3, opcode) is exactly `firstByte`: for what the encoder cannot
    /// express (reserved bits, reserved opcodes).
    static func frame(firstByte: UInt8, _ payload: [UInt8] = []) -> [UInt8] {
        var frame = WebSocketFrameEncoder.frame(.binary, payload: payload, mask: mask)
        frame[0] = firstByte
        return frame
    }

    /// A masked frame header announcing `length` payload bytes with the 64-bit length form, and no payload.
    static func header64(opcode: UInt8 = 0x81, length: UInt64, withMask: Bool = true) -> [UInt8] {
        var header: [UInt8] = [opcode, 0x80 | 127]
        for shift in stride(from: 56, through: 0, by: -8) { header.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        if withMask { header += [mask.0, mask.1, mask.2, mask.3] }
        return header
    }

    /// A connected, authenticated client that has received session:success.
    static func client(_ app: ParlorApplication, _ name: String = "conformance", timeout: Double = 5) throws -> TestWebSocket {
        try TestWebSocket(port: app.port, token: try token(app, name), timeout: timeout)
    }

    /// The reply to the request with `tid` (skipping events); nil, with an issue recorded, unless it is
    /// session:ping:success.
    @discardableResult
    static func expectPingReply(_ socket: TestWebSocket, tid: String, _ comment: Comment? = nil,
                                sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any]? {
        let reply = try socket.next { $0["tid"] as? String == tid }
        let ok = reply["type"] as? String == "session:ping:success"
        #expect(ok, "\(comment.map { "\($0): " } ?? "")got \(reply)", sourceLocation: sourceLocation)
        return ok ? reply : nil
    }

    /// The next error reply (skipping events and other replies); returns its code.
    static func nextErrorCode(_ socket: TestWebSocket) throws -> String? {
        errorCode(try socket.next { $0["type"] as? String == "error" })
    }

    /// The payload of the next pong; fails if a data message or a close comes first. Heartbeat pings are answered.
    static func nextPong(_ socket: TestWebSocket) throws -> [UInt8] {
        while true {
            switch try socket.nextMessage() {
            case .pong(let payload): return payload
            case .ping: continue
            case let other: throw TestFailure("expected a pong, got \(other)")
            }
        }
    }

    /// Reads (answering pings, skipping everything else) until the server's close frame, returning its code, or
    /// the end of the connection (nil). Throws if neither comes within `seconds`, however much else arrives.
    static func closeCode(_ socket: TestWebSocket, within seconds: Double = 5) throws -> UInt16? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            socket.connection.setTimeout(max(0.01, deadline.timeIntervalSinceNow))
            do {
                if case .close(let code, _) = try socket.nextMessage() { return code }
            } catch let error as TestFailure where error.description == "connection closed" {
                return nil
            } catch let error as TestFailure where error.description == "timed out waiting for data" {
                break
            }
        }
        throw TestFailure("no close within \(seconds) s")
    }

    /// Expects the server to send a close frame with `code`, then to end the TCP connection.
    static func expectClose(_ socket: TestWebSocket, _ code: UInt16, _ comment: Comment? = nil,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let received = try closeCode(socket)
        #expect(received == code, "\(comment.map { "\($0): " } ?? "")close code", sourceLocation: sourceLocation)
        #expect(try endsTCP(socket.connection), "\(comment.map { "\($0): " } ?? "")TCP close", sourceLocation: sourceLocation)
    }

    /// True when the server ends the connection (EOF or reset) within `seconds`, whatever it sends before.
    static func endsTCP(_ connection: RawConnection, within seconds: Double = 3) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            connection.setTimeout(max(0.01, deadline.timeIntervalSinceNow))
            _ = connection.take(connection.buffer.count)
            do {
                if try !connection.fill() { return true }
            } catch let error as TestFailure where error.description == "timed out waiting for data" {
                return false
            }
        }
        return false
    }

    /// The first `count` messages on a connection just upgraded by hand (its buffer holds what followed the 101).
    static func messages(_ count: Int, on connection: RawConnection) throws -> [WebSocketMessage] {
        var decoder = WebSocketDecoder(role: .client)
        decoder.append(connection.take(connection.buffer.count))
        var messages: [WebSocketMessage] = []
        while messages.count < count {
            if let message = try decoder.next() {
                messages.append(message)
                continue
            }
            guard try connection.fill() else { throw TestFailure("connection closed after \(messages)") }
            decoder.append(connection.take(connection.buffer.count))
        }
        return messages
    }

    /// Polls until `condition` holds or `seconds` pass; for server state no socket event reports.
    static func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { return false }
            usleep(5_000)
        }
        return true
    }

    /// Sends an upgrade request built from the given header lines on a fresh connection and reads the response.
    static func upgrade(_ app: ParlorApplication, target: String = "/ws", token: String? = nil, method: String = "GET",
                        httpVersion: String = "HTTP/1.1", headers: [(String, String)]) throws -> (RawConnection, TestResponse) {
        let connection = try RawConnection(port: app.port)
        let query = token.map { "?token=\($0)" } ?? ""
        var request = "\(method) \(target)\(query) \(httpVersion)\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try connection.send(request + "\r\n")
        return (connection, try connection.readResponse())
    }

    /// The standard upgrade header lines, each replaceable (nil leaves the line out).
    static func upgradeHeaders(upgrade: String? = "websocket", connection: String? = "Upgrade", key: String? = sampleKey,
                               version: String? = "13", extra: [(String, String)] = []) -> [(String, String)] {
        var headers: [(String, String)] = []
        if let upgrade { headers.append(("Upgrade", upgrade)) }
        if let connection { headers.append(("Connection", connection)) }
        if let key { headers.append(("Sec-WebSocket-Key", key)) }
        if let version { headers.append(("Sec-WebSocket-Version", version)) }
        return headers + extra
    }
}
