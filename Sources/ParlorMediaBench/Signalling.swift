import Foundation
import ParlorCodec
import ParlorProtocol

/// One member's WebSocket for the setup: the upgrade, session:success, then requests answered by tid (events that
/// arrive meanwhile are skipped; pings answered). Once its peer connection is up the descriptor goes to the keeper.
final class Signalling {
    let socket: BlockingSocket
    private var decoder = WebSocketDecoder(role: .client, maxFrameSize: 16 << 20, maxMessageSize: 16 << 20)
    private var nextTID = 1

    init(port: Int, token: String) throws {
        socket = try BlockingSocket(port: port)
        let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
        let request = "GET /ws?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try socket.write(Array(request.utf8))
        var headEnd: Int?
        while headEnd == nil {
            headEnd = HeadScan.end(socket.buffer)
            if headEnd == nil { try socket.fill() }
        }
        let head = String(decoding: socket.buffer[0..<headEnd!], as: UTF8.self)
        guard head.hasPrefix("HTTP/1.1 101") else { throw BenchError("WebSocket upgrade refused: \(head.prefix(80))") }
        socket.buffer.removeFirst(headEnd! + 4)
        decoder.append(socket.buffer)
        socket.buffer.removeAll()
        let success = EventType.sessionSuccess.rawValue
        _ = try next(containing: success) { $0["type"] as? String == success }
    }

    /// Sends a request and returns its success body; an error reply throws.
    @discardableResult
    func call(_ request: RequestType, _ body: [String: Any]) throws -> [String: Any] {
        let type = request.rawValue
        let tid = String(nextTID)
        nextTID += 1
        let frame = try JSONSerialization.data(withJSONObject: ["type": type, "tid": tid, "body": body])
        try send(.text, Array(frame))
        let reply = try next(containing: "\"tid\":\"\(tid)\"") { $0["tid"] as? String == tid }
        guard reply["type"] as? String == "\(type):success" else { throw BenchError("\(type) failed: \(reply)") }
        return reply["body"] as? [String: Any] ?? [:]
    }

    /// Bytes received but not decoded yet are handed over with the descriptor.
    func detach() -> (fd: Int32, decoder: WebSocketDecoder) { (socket.detach(), decoder) }

    private func send(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws {
        let mask: WebSocketFrameEncoder.Mask = (UInt8.random(in: 0...255), 0x5A, UInt8.random(in: 0...255), 0xA5)
        try socket.write(WebSocketFrameEncoder.frame(opcode, payload: payload, fin: true, mask: mask))
    }

    /// The next message satisfying `matches`; only texts containing `needle` are parsed (a join into a large room
    /// brings a member:joined per member, and JSON-parsing each would make the setup the slow part of a run).
    private func next(containing needle: String, _ matches: ([String: Any]) -> Bool) throws -> [String: Any] {
        while true {
            while let message = try decoder.next() {
                switch message {
                case .ping(let payload): try send(.pong, payload)
                case .text(let text):
                    guard text.contains(needle) else { break }
                    if let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], matches(object) { return object }
                case .close(let code, let reason): throw BenchError("server closed the WebSocket: \(code.map(String.init) ?? "-") \(reason)")
                default: break
                }
            }
            try socket.fill()
            decoder.append(socket.buffer)
            socket.buffer.removeAll()
        }
    }
}
