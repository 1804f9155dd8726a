#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorCodec
@testable import ParlorClient  // SHA1Digest: the client's SHA-1 (a library's), to check the server's answer

/// A WebSocket client for tests over a real socket: raw frames when a test needs them, and a request/event API
/// (replies matched by tid, events queued in arrival order) when it does not.
final class TestWebSocket {
    let connection: RawConnection
    private var decoder = WebSocketDecoder(role: .client, maxFrameSize: 16 << 20, maxMessageSize: 16 << 20)
    /// Protocol messages received but not yet consumed, in arrival order.
    private(set) var inbox: [[String: Any]] = []
    private var nextTid = 0
    private(set) var sessionID = ""
    private(set) var userID = ""
    /// The highest event id seen per room, for session:resume.
    private(set) var lastEventIDs: [String: Int] = [:]
    /// Every event id seen per room, in order, to check for gaps.
    private(set) var eventIDs: [String: [Int]] = [:]
    /// Every protocol message received, replies included, in arrival order.
    private(set) var log: [[String: Any]] = []

    /// Upgrades a fresh connection; with `awaitSession` it also waits for session:success. `source` binds the client
    /// end to another loopback address (127.0.0.2, …) to play a second client address.
    init(port: Int, token: String?, path: String = "/ws", awaitSession: Bool = true, timeout: Double = 5, source: String? = nil,
         receiveBufferBytes: Int32? = nil) throws {
        connection = try RawConnection(port: port, timeout: timeout, source: source, receiveBufferBytes: receiveBufferBytes)
        let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
        var request = "GET \(path)\(token.map { "?token=\($0)" } ?? "") HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try connection.send(request)
        let response = try connection.readResponse()
        guard response.status == 101 else { throw TestFailure("upgrade refused: \(response.status) \(response.text)") }
        guard response.header("Sec-WebSocket-Accept") == WebSocketHandshake.acceptValue(forKey: key, sha1: SHA1Digest.hash) else {
            throw TestFailure("wrong Sec-WebSocket-Accept")
        }
        decoder.append(connection.take(connection.buffer.count))
        if awaitSession {
            let hello = try next { $0["type"] as? String == "session:success" }
            let body = hello["body"] as? [String: Any] ?? [:]
            sessionID = body["session_id"] as? String ?? ""
            userID = (body["user"] as? [String: Any])?["id"] as? String ?? ""
        }
    }

    convenience init(_ app: ParlorApplication, name: String) throws {
        try self.init(port: app.port, token: try token(app, name))
    }

    // MARK: Frames

    func sendFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) throws {
        let mask: WebSocketFrameEncoder.Mask? = masked ? (UInt8.random(in: 0...255), 0x5A, UInt8.random(in: 0...255), 0xA5) : nil
        try connection.send(WebSocketFrameEncoder.frame(opcode, payload: payload, fin: fin, mask: mask))
    }

    func sendText(_ text: String) throws { try sendFrame(.text, Array(text.utf8)) }

    /// The next message of any kind; pings are answered and returned too.
    func nextMessage() throws -> WebSocketMessage {
        while true {
            if let message = try decoder.next() {
                if case .ping(let payload) = message { try sendFrame(.pong, payload) }
                return message
            }
            guard try connection.fill() else { throw TestFailure("connection closed") }
            decoder.append(connection.take(connection.buffer.count))
        }
    }

    /// Reads until the server's close frame (returning its code) or the end of the connection (nil).
    func closeCode() throws -> UInt16? {
        while true {
            do {
                if case .close(let code, _) = try nextMessage() { return code }
            } catch let error as TestFailure where error.description == "connection closed" {
                return nil
            }
        }
    }

    // MARK: Protocol

    /// `deadline`: the server's pings (every 5 s) would otherwise keep a wait for what never comes alive forever.
    private func receiveJSON(until deadline: Date = .distantFuture) throws -> [String: Any] {
        while true {
            guard Date() < deadline else { throw TestFailure("the expected message did not arrive within 30 s") }
            switch try nextMessage() {
            case .text(let text):
                guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                    throw TestFailure("not a JSON object: \(text)")
                }
                record(object)
                log.append(object)
                return object
            case .close(let code, let reason):
                throw TestFailure("closed by server: \(code.map(String.init) ?? "-") \(reason)")
            default: continue
            }
        }
    }

    private func record(_ message: [String: Any]) {
        guard let type = message["type"] as? String,
              type.hasPrefix("member:") || type.hasPrefix("audio:") || type.hasPrefix("message:") || type.hasPrefix("room:"),
              let cid = message["cid"] as? String, let id = message["id"] as? Int else { return }
        eventIDs[cid, default: []].append(id)
        lastEventIDs[cid] = max(lastEventIDs[cid] ?? 0, id)
    }

    /// The first queued or arriving message matching `predicate`; others stay queued in order.
    func next(where predicate: ([String: Any]) -> Bool) throws -> [String: Any] {
        if let index = inbox.firstIndex(where: predicate) { return inbox.remove(at: index) }
        let deadline = Date().addingTimeInterval(30)
        while true {
            let message = try receiveJSON(until: deadline)
            if predicate(message) { return message }
            inbox.append(message)
        }
    }

    /// The next event of `type` in room `cid` (optionally about `memberID`).
    func event(_ type: String, in cid: String, member memberID: String? = nil) throws -> [String: Any] {
        try next { message in
            guard message["type"] as? String == type, message["cid"] as? String == cid else { return false }
            guard let memberID else { return true }
            return (message["body"] as? [String: Any])?["member_id"] as? String == memberID
        }
    }

    /// Sends a request and returns its reply (success or error) matched by tid.
    func request(_ type: String, _ body: [String: Any] = [:]) throws -> [String: Any] {
        nextTid += 1
        let tid = "t\(nextTid)"
        let data = try JSONSerialization.data(withJSONObject: ["type": type, "tid": tid, "body": body])
        try sendText(String(decoding: data, as: UTF8.self))
        return try next { $0["tid"] as? String == tid }
    }

    /// A request that must succeed; returns the reply body.
    func call(_ type: String, _ body: [String: Any] = [:]) throws -> [String: Any] {
        let reply = try request(type, body)
        guard reply["type"] as? String == type + ":success" else { throw TestFailure("\(type) failed: \(reply)") }
        return reply["body"] as? [String: Any] ?? [:]
    }

    /// The member id this client got from its last join of `cid`.
    private(set) var memberIDs: [String: String] = [:]
    func lastJoinReplyMember(_ cid: String) -> String? { memberIDs[cid] }

    func join(_ cid: String) throws -> [String: Any] {
        let body = try call("conversation:join", ["cid": cid])
        memberIDs[cid] = body["member_id"] as? String
        if let last = body["last_event_id"] as? Int { lastEventIDs[cid] = max(lastEventIDs[cid] ?? 0, last) }
        return body
    }

    /// Drains messages already sent to us, by round-tripping a ping (replies come in order after them).
    func sync() throws { _ = try call("session:ping") }

    /// Closes the TCP connection without a WebSocket close: a dropped client.
    func drop() { shutdown(connection.fd, Int32(SHUT_RDWR)) }
}

func members(_ body: [String: Any]) -> [[String: Any]] { body["members"] as? [[String: Any]] ?? [] }
func memberNames(_ body: [String: Any]) -> [String] {
    members(body).compactMap { ($0["user"] as? [String: Any])?["name"] as? String }.sorted()
}
func errorCode(_ reply: [String: Any]) -> String? {
    reply["type"] as? String == "error" ? (reply["body"] as? [String: Any])?["code"] as? String : nil
}
