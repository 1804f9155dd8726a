#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem

extension SocketAddress {
    /// A blocking TCP socket connected to this address, for the tools that block on purpose (the bench generators'
    /// unmeasured setup requests). `sendTimeout` bounds connect(2) as well as writes (SO_SNDTIMEO), `receiveTimeout`
    /// each read; TCP_NODELAY as on the loop's sockets. The caller owns and closes the descriptor.
    public func connectBlocking(sendTimeout: Duration, receiveTimeout: Duration) throws(SystemError) -> Int32 {
        let fd = try retryingOnInterrupt("socket") { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        var send = timeval(sendTimeout), receive = timeval(receiveTimeout)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &receive, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = storage
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw SystemError("connect to \(self)", errno: code)
        }
        return fd
    }
}

private extension timeval {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
