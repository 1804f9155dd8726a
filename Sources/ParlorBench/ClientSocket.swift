import ParlorCodec
import ParlorLoop

/// What a generator client (churn's BenchClient, the audience scenario's AudienceClient) owns of its socket, and the
/// client side of the WebSocket they share: the upgrade request, the server's 101, and frames. Loop thread only.
protocol ClientSocket: AnyObject {
    /// The connect under way, then the open connection; nil once the socket is gone.
    var pending: PendingConnection? { get set }
    var connection: Connection? { get set }
    var head: [UInt8] { get set }
    var decoder: WebSocketDecoder { get set }
}

enum HandshakeProgress {
    case waiting, upgraded, failed(String)
}

/// A message the decoder completed, pings answered and pongs skipped on the way.
enum ClientMessage {
    case text(String), binary, close(code: UInt16?, reason: String), failed(String)
}

extension ClientSocket {
    var hasSocket: Bool { pending != nil || connection != nil }

    /// Cancels the connect or closes the connection (its handler then hears nothing more of it); false if neither.
    func releaseSocket() -> Bool {
        if let pending {
            self.pending = nil
            pending.cancel()
        } else if let connection {
            self.connection = nil
            connection.close()
        } else {
            return false
        }
        return true
    }

    func writeUpgradeRequest(token: String, host: String, port: Int, random: inout FastRandom) {
        var key: [UInt8] = []
        for _ in 0..<16 { key.append(UInt8(truncatingIfNeeded: random.next())) }
        let request = "GET /ws?token=\(token) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(Base64.encode(key))\r\n"
            + "Sec-WebSocket-Version: 13\r\n\r\n"
        connection?.write(Array(request.utf8))
    }

    /// Reads the server's answer to the upgrade; once it is a 101, what followed its head goes to the decoder.
    func readUpgradeResponse(_ bytes: UnsafeRawBufferPointer) -> HandshakeProgress {
        head.append(contentsOf: bytes)
        guard let end = HTTPBytes.headEnd(head) else { return head.count > 16384 ? .failed("handshake: head too large") : .waiting }
        let headText = String(decoding: head[0..<end], as: UTF8.self)
        guard HTTPBytes.status(headText) == 101 else {
            return .failed("handshake: status \(HTTPBytes.status(headText).map(String.init) ?? "?")")
        }
        let rest = Array(head[(end + 4)...])
        head = []
        if !rest.isEmpty { decoder.append(rest) }
        return .upgraded
    }

    /// The decoder's next message, or nil when no whole one is buffered; pings are answered (and counted) here.
    func nextMessage(random: inout FastRandom, pingsAnswered: inout Int) -> ClientMessage? {
        while connection != nil {
            let message: WebSocketMessage?
            do {
                message = try decoder.next()
            } catch {
                return .failed("websocket: \(error.reason)")
            }
            switch message {
            case nil: return nil
            case .text(let text): return .text(text)
            case .binary: return .binary
            case .ping(let payload):
                pingsAnswered += 1
                connection?.write(WebSocketFrameEncoder.frame(.pong, payload: payload, mask: random.mask()))
            case .pong: break
            case .close(let code, let reason): return .close(code: code, reason: reason)
            }
        }
        return nil
    }
}
