#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Listens on one address from every loop of a group and hands each accepted connection, on its own loop,
/// to `accepted`.
public final class TCPServer: Sendable {
    public let group: EventLoopGroup
    /// The bound address; with port 0 this holds the port the kernel chose.
    public let localAddress: SocketAddress
    private let listenerFDs: [Int32]
    private let accepting = Atomic<Bool>(true)

    public init(group: EventLoopGroup, host: String, port: Int, backlog: Int32 = 4096, tls: TLSContext? = nil,
                logger: Logger = Logger(), accepted: @escaping @Sendable (Connection) -> Void) throws {
        guard let requested = SocketAddress(host: host, port: port) else {
            throw SystemError("parse address \(host)", errno: EINVAL)
        }
        // Bind the first to learn the port (port 0 picks one), then bind the rest to that same port.
        let first = try Listener.bind(requested, backlog: backlog)
        guard let bound = Listener.localAddress(of: first), let shared = SocketAddress(host: host, port: bound.port) else {
            Glibc.close(first)
            throw SystemError("getsockname")
        }
        var fds = [first]
        do {
            for _ in 1..<group.loops.count { fds.append(try Listener.bind(shared, backlog: backlog)) }
        } catch {
            fds.forEach { Glibc.close($0) }
            throw error
        }
        self.group = group
        self.localAddress = bound
        self.listenerFDs = fds
        for (loop, fd) in zip(group.loops, fds) {
            let failure: String? = loop.submitAndWait {
                let listener = Listener(loop: loop, fd: fd, tls: tls, logger: logger, accepted: accepted)
                do { try listener.register() } catch { return "\(error)" }
                return nil
            }
            if let failure { throw SystemError("register listener: \(failure)", errno: EINVAL) }
        }
    }

    /// Stops accepting; established connections stay open.
    public func stopAccepting() {
        guard accepting.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for (loop, fd) in zip(group.loops, listenerFDs) {
            loop.submitAndWait {
                (loop.handler(fd: fd) as? Listener)?.close()
            }
        }
    }
}
