#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem
import Synchronization

/// A listening socket registered on one loop. Each loop of a server has its own, bound with SO_REUSEPORT,
/// so the kernel spreads new connections across loops without a hand-off between threads.
final class Listener: SelectorHandler {
    let loop: EventLoop
    let fd: Int32
    private var registrationID: UInt32 = 0
    private let accepted: (Connection) -> Void
    private let tls: TLSContext?
    private let logger: Logger
    private var isOpen = true
    /// Held in reserve for when descriptors run out: closing it lets one pending client be accepted and closed, so
    /// the backlog drains and clients hear at once, instead of a level-triggered listener waking us for ever.
    private var spareFD: Int32 = Listener.openSpare()
    private var paused = false
    /// When running out of descriptors was last logged, by any listener (0: never).
    private static let lastExhaustionLog = Atomic<UInt64>(0)

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

    init(loop: EventLoop, fd: Int32, tls: TLSContext?, logger: Logger, accepted: @escaping (Connection) -> Void) {
        self.loop = loop
        self.fd = fd
        self.tls = tls
        self.logger = logger
        self.accepted = accepted
    }

    private static func openSpare() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }

    func register() throws(SystemError) {
        registrationID = try loop.register(fd: fd, interest: .read, handler: self)
    }

    func close() {
        loop.assertInLoop()
        guard isOpen else { return }
        isOpen = false
        loop.deregister(fd: fd, id: registrationID)
        Glibc.close(fd)
        if spareFD >= 0 { Glibc.close(spareFD) }
        spareFD = -1
    }

    func handleSelectorEvent(readable: Bool, writable: Bool, hangUp: Bool) {
        loop.assertInLoop()
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
                case EMFILE, ENFILE:
                    noteExhaustion(errno: errno)
                    switch shedPendingClient() {
                    case .shed: continue
                    case .nothingPending: return
                    case .failed:
                        pause()
                        return
                    }
                case ENOBUFS, ENOMEM:
                    pause()
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

extension Listener {
    fileprivate enum ShedResult { case shed, nothingPending, failed }

    /// Out of descriptors: frees the spare, accepts one pending client and closes it at once (it sees the close
    /// instead of waiting in the backlog), then takes the spare back.
    fileprivate func shedPendingClient() -> ShedResult {
        guard spareFD >= 0 else { return .failed }
        Glibc.close(spareFD)
        let client = parlor_accept4(fd, nil, nil)
        let acceptError = errno
        if client >= 0 { Glibc.close(client) }
        spareFD = Self.openSpare()
        if client >= 0 { return .shed }
        return acceptError == EAGAIN || acceptError == EWOULDBLOCK ? .nothingPending : .failed
    }

    /// Stops listening for a moment (another thread took the freed descriptor, or the kernel is short of memory):
    /// level-triggered epoll would otherwise report the pending clients again at once.
    fileprivate func pause() {
        guard !paused, isOpen else { return }
        paused = true
        loop.reregister(fd: fd, id: registrationID, interest: [])
        _ = loop.schedule(after: .milliseconds(100)) { [weak self] in
            guard let self, isOpen else { return }
            paused = false
            if spareFD < 0 { spareFD = Self.openSpare() }
            loop.reregister(fd: fd, id: registrationID, interest: .read)
        }
    }

    /// Logs running out of descriptors at most once a minute for the whole process, not once per refused client.
    fileprivate func noteExhaustion(errno code: Int32) {
        let now = MonotonicClock.now()
        let last = Self.lastExhaustionLog.load(ordering: .relaxed)
        if last != 0, now - last < 60_000_000_000 { return }
        guard Self.lastExhaustionLog.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged else { return }
        logger.warning("out of file descriptors: closing new connections at once", ["loop": loop.name, "errno": String(code)])
    }
}
