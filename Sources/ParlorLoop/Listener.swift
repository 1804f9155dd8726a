#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem

/// A listening socket registered on one loop. Each loop of a server has its own, bound with SO_REUSEPORT,
/// so the kernel spreads new connections across loops without a hand-off between threads.
final class Listener: SelectorHandler {
    let loop: EventLoop
    let fd: Int32
    private var registrationID: UInt32 = 0
    private let accepted: (Connection) -> Void
    private let tls: TLSContext?
    private var isOpen = true

    /// Creates, binds and listens; does not register yet (that happens on the loop thread).
    static func bind(_ address: SocketAddress, backlog: Int32) throws(SystemError) -> Int32 {
        let fd = try retryingOnInterrupt("socket") {
            socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = address.storage
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, address.length) }
        }
        if bound != 0 {
            let error = SystemError("bind \(address)")
            Glibc.close(fd)
            throw error
        }
        if listen(fd, backlog) != 0 {
            let error = SystemError("listen")
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    static func localAddress(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return ok == 0 ? SocketAddress(storage: storage, length: length) : nil
    }

    init(loop: EventLoop, fd: Int32, tls: TLSContext?, accepted: @escaping (Connection) -> Void) {
        self.loop = loop
        self.fd = fd
        self.tls = tls
        self.accepted = accepted
    }

    func register() throws(SystemError) {
        registrationID = try loop.register(fd: fd, interest: .read, handler: self)
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        loop.deregister(fd: fd, id: registrationID)
        Glibc.close(fd)
    }

    func handleSelectorEvent(readable: Bool, writable: Bool, hangUp: Bool) {
        // Accept a bounded batch per wake-up; level-triggered epoll reports the rest next time.
        for _ in 0..<64 {
            guard isOpen else { return }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { parlor_accept4(fd, $0, &length) }
            }
            if client < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EAGAIN, EWOULDBLOCK: return
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop for now rather than spin; level-triggered epoll retries next wake-up.
                    return
                default: return
                }
            }
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let address = SocketAddress(storage: storage, length: length)
            let connection = Connection(loop: loop, fd: client, peer: address.description, peerIP: address.ip)
            do {
                if let tls { connection.tls = try TLSStream(context: tls, fd: client) }
                try connection.register()
            } catch {
                Glibc.close(client)
                continue
            }
            accepted(connection)
        }
    }
}
