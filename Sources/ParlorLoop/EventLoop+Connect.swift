#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem

/// What an outbound connection tells whoever opened it, on top of everything a `ConnectionHandler` hears once it is
/// open. Called on the loop thread only, and never from inside `EventLoop.connect` itself.
public protocol OutboundConnectionHandler: ConnectionHandler {
    /// The connect completed. `connection` reads from now on and takes writes; this handler is its `handler`.
    func connectionDidConnect(_ connection: Connection)
    /// The connect failed (refused, unreachable, out of descriptors, …): no connection, no socket left.
    func connectionDidFail(to address: SocketAddress, error: SystemError)
}

extension EventLoop {
    /// Opens a TCP connection to `address` without blocking: a non-blocking `connect`, completed when epoll reports
    /// the socket writable and `SO_ERROR` is clear. The handler then hears `connectionDidConnect` and, from there
    /// on, what every accepted connection's handler hears; or `connectionDidFail` once, whatever went wrong, always
    /// from a later loop turn (an immediate failure too), so the caller has one path for errors. Loop thread only.
    @discardableResult
    public func connect(to address: SocketAddress, handler: OutboundConnectionHandler) -> PendingConnection {
        assertInLoop()
        let pending = PendingConnection(loop: self, address: address, handler: handler)
        pending.start()
        return pending
    }
}

/// A TCP connection its loop is opening: the socket is registered for writability until the connect completes,
/// then handed, with `TCP_NODELAY` set like an accepted socket, to a `Connection` on the same loop.
public final class PendingConnection: SelectorHandler {
    public let loop: EventLoop
    /// Where it connects to.
    public let address: SocketAddress
    /// Until the outcome is delivered or the attempt is cancelled.
    private var handler: OutboundConnectionHandler?
    private var fd: Int32 = -1
    private var registrationID: UInt32 = 0

    init(loop: EventLoop, address: SocketAddress, handler: OutboundConnectionHandler) {
        self.loop = loop
        self.address = address
        self.handler = handler
    }

    /// True until the handler has heard how it ended, or the attempt was cancelled.
    public var isPending: Bool { handler != nil }

    /// Gives up on the connect and closes its socket; the handler hears nothing more. Loop thread only.
    public func cancel() {
        loop.assertInLoop()
        guard handler != nil else { return }
        handler = nil
        closeSocket()
    }

    fileprivate func start() {
        let socketFD: Int32
        do {
            socketFD = try retryingOnInterrupt("socket") {
                socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            }
        } catch {
            return failSoon(error)
        }
        var one: Int32 = 1
        setsockopt(socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = address.storage
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socketFD, $0, address.length) }
        }
        let code = result == 0 ? 0 : errno
        // An interrupted non-blocking connect goes on in the background, like one in progress.
        if code != 0, code != EINPROGRESS, code != EINTR {
            let error = SystemError("connect \(address)", errno: code)
            Glibc.close(socketFD)
            return failSoon(error)
        }
        fd = socketFD
        do {
            registrationID = try loop.register(fd: socketFD, interest: .write, handler: self)
        } catch {
            closeSocket()
            failSoon(error)
        }
    }

    func handleSelectorEvent(readable: Bool, writable: Bool, hangUp: Bool) {
        loop.assertInLoop()
        guard let handler, fd >= 0 else { return }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        if code == 0, !writable, !hangUp { return }  // level-triggered: the completion is reported again
        if code != 0 || !writable {
            // A hang-up with no error recorded still means no connection.
            let error = SystemError("connect \(address)", errno: code != 0 ? code : ECONNRESET)
            self.handler = nil
            closeSocket()
            handler.connectionDidFail(to: address, error: error)
            return
        }
        self.handler = nil
        let socketFD = fd
        loop.deregister(fd: socketFD, id: registrationID)
        fd = -1
        let connection = Connection(loop: loop, fd: socketFD, peer: address.description, peerIP: address.ip)
        do {
            try connection.register()
        } catch {
            Glibc.close(socketFD)
            handler.connectionDidFail(to: address, error: error)
            return
        }
        connection.handler = handler
        handler.connectionDidConnect(connection)
    }

    private func closeSocket() {
        guard fd >= 0 else { return }
        loop.deregister(fd: fd, id: registrationID)
        Glibc.close(fd)
        fd = -1
    }

    /// Reports a failure from a later loop turn (a timer due now), never inside the caller's own `connect`.
    private func failSoon(_ error: SystemError) {
        loop.schedule(after: TimeSpan(nanoseconds: 0)) { [self] in
            guard let handler else { return }  // cancelled meanwhile
            self.handler = nil
            handler.connectionDidFail(to: address, error: error)
        }
    }
}
