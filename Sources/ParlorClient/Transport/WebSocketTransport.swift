import Foundation
import ParlorCodec

/// What a connection's reader thread reports, in the order it happened.
enum TransportInput: Sendable {
    case text(String)
    /// The connection is over; the error says why (a close we started ends as `client:error:closed`).
    case closed(ParlorError)
}

/// One client WebSocket (RFC 6455) over a `ByteStream` (plain for ws://, TLS for wss://): the upgrade handshake, masked frames out, and a reader thread
/// that answers pings itself and hands text messages on. Sends may come from any thread; frames never interleave
/// because the stream's `send` writes each one whole under its lock.
final class WebSocketTransport: Sendable {
    /// A connection whose handshake is done and whose first message (session:success) has been read.
    struct Opened: Sendable {
        let transport: WebSocketTransport
        /// Holds any bytes that arrived after the first message; the reader thread continues from it.
        let decoder: WebSocketDecoder
        let hello: String
    }

    private let socket: any ByteStream
    private let closeSent = Locked(false)

    private init(socket: any ByteStream) {
        self.socket = socket
    }

    /// Connects, upgrades `GET /ws` with the token as a bearer header, and reads the server's first message.
    static func open(_ endpoint: ServerEndpoint, token: String, configuration: ParlorClientConfiguration) throws(ParlorError) -> Opened {
        let socket = try endpoint.openStream(trust: configuration.tls, timeout: configuration.connectTimeout)
        do throws(ParlorError) {
            socket.setReceiveTimeout(configuration.connectTimeout)
            socket.setSendTimeout(configuration.requestTimeout)
            let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
            var request = "GET \(endpoint.basePath)/ws HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\n"
            request += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
            request += "Authorization: Bearer \(token)\r\nUser-Agent: ParlorClient\r\n\r\n"
            try socket.send(Array(request.utf8))

            var buffer: [UInt8] = []
            var parsed: (head: HTTPResponseHead, length: Int)?
            while parsed == nil {
                try receive(from: socket, into: &buffer, waiting: configuration.connectTimeout)
                parsed = try HTTPResponseHead.parse(buffer)
            }
            guard let (head, headLength) = parsed else { throw ParlorError.handshakeFailed("no response") }
            guard head.status == 101 else {
                throw refusal(head, buffer: buffer, headLength: headLength, socket: socket, timeout: configuration.connectTimeout)
            }
            guard head.headers.tokens("Upgrade").contains("websocket") else {
                throw ParlorError.handshakeFailed("101 without Upgrade: websocket")
            }
            guard head.headers["Sec-WebSocket-Accept"] == WebSocketHandshake.acceptValue(forKey: key, sha1: SHA1Digest.hash) else {
                throw ParlorError.handshakeFailed("Sec-WebSocket-Accept does not match the key sent")
            }

            let limit = configuration.maxMessageBytes
            var decoder = WebSocketDecoder(role: .client, maxFrameSize: limit, maxMessageSize: limit)
            decoder.append(Array(buffer[headLength...]))
            let transport = WebSocketTransport(socket: socket)
            while true {
                let message: WebSocketMessage?
                do {
                    message = try decoder.next()
                } catch {
                    throw ParlorError.handshakeFailed("protocol error from the server: \(error.reason)")
                }
                switch message {
                case .text(let text)?:
                    return Opened(transport: transport, decoder: decoder, hello: text)
                case .ping(let payload)?:
                    try transport.sendFrame(.pong, payload)
                case .close(let code, let reason)?:
                    throw ParlorError.connectionLost("the server closed the connection (\(code.map(String.init) ?? "no code")) \(reason)")
                case .binary?, .pong?:
                    continue
                case nil:
                    var more: [UInt8] = []
                    try receive(from: socket, into: &more, waiting: configuration.connectTimeout)
                    decoder.append(more)
                }
            }
        } catch {
            socket.close()
            throw error
        }
    }

    /// The server's refusal of the upgrade as the error it carries (401 with auth:error:*, …).
    private static func refusal(_ head: HTTPResponseHead, buffer: [UInt8], headLength: Int, socket: any ByteStream,
                                timeout: Duration) -> ParlorError {
        var buffer = buffer
        let length = min((try? head.contentLength()) ?? 0, 1 << 20)
        while buffer.count - headLength < length {
            do { try receive(from: socket, into: &buffer, waiting: timeout) } catch { break }
        }
        let body = JSONValue.parse(buffer[headLength..<min(buffer.count, headLength + length)])
        return ParlorError(body: body, status: head.status)
    }

    private static func receive(from socket: any ByteStream, into buffer: inout [UInt8], waiting timeout: Duration) throws(ParlorError) {
        var chunk = [UInt8](repeating: 0, count: 16384)
        switch try socket.receive(into: &chunk) {
        case .bytes(let count): buffer += chunk[..<count]
        case .endOfStream: throw .connectionLost("the server closed the connection during the handshake")
        case .timedOut: throw .timedOut("the server did not answer the WebSocket upgrade within \(timeout)")
        }
    }

    // MARK: Running

    /// Starts the reader thread. It ends when the connection does, closes the socket, and reports `.closed` last.
    /// `idleTimeout`: nothing at all received for this long (the server pings every few seconds) counts as a drop.
    func startReading(_ decoder: WebSocketDecoder, idleTimeout: Duration?, handler: @escaping @Sendable (TransportInput) -> Void) {
        socket.setReceiveTimeout(idleTimeout)
        let thread = Thread { [self] in
            let ending = readLoop(decoder, idleTimeout: idleTimeout, handler: handler)
            socket.close()
            handler(.closed(ending))
        }
        thread.name = "ParlorClient WebSocket reader"
        thread.start()
    }

    private func readLoop(_ decoder: WebSocketDecoder, idleTimeout: Duration?, handler: (TransportInput) -> Void) -> ParlorError {
        var decoder = decoder
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            do {
                while let message = try decoder.next() {
                    switch message {
                    case .text(let text):
                        handler(.text(text))
                    case .ping(let payload):
                        try? sendFrame(.pong, payload)
                    case .close(let code, let reason):
                        let weClosed = sendClose(code: code ?? WebSocketCloseCode.normal)
                        if weClosed { return .closedByClient }
                        if code == 4004 { return ParlorError(code: ParlorError.Code.serverReset, detail: "the server was reset (4004) \(reason)") }
                        if code == 4005 {
                            return ParlorError(code: ParlorError.Code.sessionTakenOver, detail: "another connection resumed this session (4005) \(reason)")
                        }
                        return .connectionLost("the server closed the connection (\(code.map(String.init) ?? "no code")) \(reason)")
                    case .binary, .pong:
                        continue
                    }
                }
            } catch {
                _ = sendClose(code: error.closeCode, reason: error.reason)
                return .connectionLost("protocol error from the server: \(error.reason)")
            }
            let received: ReceiveResult
            do throws(ParlorError) {
                received = try socket.receive(into: &chunk)
            } catch {
                return error
            }
            switch received {
            case .bytes(let count):
                chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            case .endOfStream:
                return closeSent.withLock { $0 } ? .closedByClient : .connectionLost("the connection was closed")
            case .timedOut:
                return .timedOut("nothing received for \(idleTimeout.map { "\($0)" } ?? "too long"); the connection is presumed dead")
            }
        }
    }

    func send(text: String) throws(ParlorError) {
        try socket.send(WebSocketFrameEncoder.text(text, mask: Self.randomMask()))
    }

    private func sendFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws(ParlorError) {
        try socket.send(WebSocketFrameEncoder.frame(opcode, payload: payload, mask: Self.randomMask()))
    }

    /// Sends a close frame unless one was sent already; returns whether one had been sent before (we started closing).
    @discardableResult
    private func sendClose(code: UInt16, reason: String = "") -> Bool {
        let alreadySent = closeSent.withLock { sent in
            defer { sent = true }
            return sent
        }
        if !alreadySent {
            let wireCode = WebSocketCloseCode.isValidOnWire(code) ? code : WebSocketCloseCode.normal
            try? socket.send(WebSocketFrameEncoder.close(code: wireCode, reason: reason, mask: Self.randomMask()))
        }
        return alreadySent
    }

    /// The closing handshake: our close frame now; the reader ends when the server echoes it, or in `grace` at most.
    func close(grace: Duration = .seconds(2)) {
        sendClose(code: WebSocketCloseCode.normal)
        let socket = self.socket
        DispatchQueue.global().asyncAfter(deadline: .now() + grace.seconds) { socket.shutdown() }
    }

    /// Closes a connection whose reader was never started (its first message was not what a session starts with).
    func discard() {
        socket.close()
    }

    /// Cuts the connection without a close frame, as a network failure would: the reader sees the end of the stream.
    func drop() {
        socket.shutdown()
    }

    private static func randomMask() -> WebSocketFrameEncoder.Mask {
        var generator = SystemRandomNumberGenerator()
        let bits = generator.next() as UInt32
        return (UInt8(truncatingIfNeeded: bits), UInt8(truncatingIfNeeded: bits >> 8),
                UInt8(truncatingIfNeeded: bits >> 16), UInt8(truncatingIfNeeded: bits >> 24))
    }
}
