#if canImport(Glibc)
import Glibc
#endif
import ParlorCodec
import ParlorLoop

/// Keeps the members' WebSockets open once their peer connections are up: on one loop, reads and discards the
/// room's events (every join is broadcast to the room) and answers the server's pings, so no member is dropped for
/// silence or a full output queue during the measurement.
final class Keeper: @unchecked Sendable {  // `kept` is touched only on `loop`
    let loop: EventLoop
    private var kept: [KeptSocket] = []

    init() throws {
        loop = try EventLoop(name: "media-bench-keeper")
        loop.start()
    }

    /// Takes a signalling connection over (any thread).
    func adopt(_ signalling: Signalling) {
        let (fd, decoder) = signalling.detach()
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        let socket = KeptSocket(fd: fd, decoder: decoder, loop: loop)
        loop.execute { [self] in
            do {
                socket.registration = try loop.register(descriptor: fd, interest: .read, handler: socket)
                kept.append(socket)
                socket.drain()
            } catch {
                socket.close()
            }
        }
    }

    /// Closes every connection (their members leave after the server's grace period or when the server stops).
    func closeAll() {
        _ = loop.submitAndWait { [self] in
            for socket in kept { socket.close() }
            kept.removeAll()
            return true
        }
    }

    /// Connections the server closed during the run.
    var closedByServer: Int { loop.submitAndWait { [self] in kept.filter(\.ended).count } }
}

final class KeptSocket: DescriptorHandler, @unchecked Sendable {  // created off the loop, then touched only on `loop`
    let fd: Int32
    unowned let loop: EventLoop
    private var closed = false
    var decoder: WebSocketDecoder
    var registration: DescriptorRegistration?
    private(set) var ended = false
    private var chunk = [UInt8](repeating: 0, count: 65536)

    init(fd: Int32, decoder: WebSocketDecoder, loop: EventLoop) {
        self.fd = fd
        self.loop = loop
        self.decoder = decoder
    }

    func handleDescriptorEvent(readable: Bool, writable: Bool, hangUp: Bool) { drain() }

    /// Reads until the socket would block, answering pings; everything else is dropped.
    func drain() {
        guard !ended else { return }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { ended = true }
                break
            }
            decoder.append(Array(chunk[0..<count]))
        }
        while let message = try? decoder.next() {
            if case .ping(let payload) = message {
                let pong = WebSocketFrameEncoder.frame(.pong, payload: payload, fin: true, mask: (1, 2, 3, 4))
                _ = pong.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }  // a few bytes: the socket buffer takes them
            }
            if case .close = message { ended = true }
        }
        if ended { close() }
    }

    func close() {
        guard !closed else { return }
        closed = true
        if let registration { loop.deregister(registration) }
        registration = nil
        Glibc.close(fd)
    }
}
