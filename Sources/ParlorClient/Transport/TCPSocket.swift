#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(Glibc)
private let streamType = Int32(SOCK_STREAM.rawValue)
private let sendFlags = Int32(MSG_NOSIGNAL)
#else
private let streamType = SOCK_STREAM
private let sendFlags: Int32 = 0  // Darwin has no MSG_NOSIGNAL: SO_NOSIGPIPE is set on the socket instead.
#endif

/// A connected, blocking TCP socket with bounded reads and writes.
///
/// Threading: any thread may `send`, `shutdown` or `close`; only one thread at a time may `receive`. The descriptor
/// is closed once, under the lock, so a send can never write to a number the system has already handed out again.
/// A reader blocked in `receive` is woken by `shutdown` (which is what `close` does first when another thread owns
/// the read side), so the owner of the read loop should be the one that finally closes.
final class TCPSocket: Sendable {
    private let fd: Int32
    /// True once the descriptor is closed; sends take the lock so they never race with close.
    private let closed = Locked(false)

    private init(fd: Int32) {
        self.fd = fd
    }

    /// Resolves `host` and connects to the first address that answers within `timeout`.
    static func connect(host: String, port: Int, timeout: Duration) throws(ParlorError) -> TCPSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == 0 ? "no addresses" : String(cString: gai_strerror(status))
            throw ParlorError.connectionFailed("cannot resolve \(host): \(reason)")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no usable address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { lastError = "socket: \(errorText())"; continue }
            if let failure = connect(fd, to: info.pointee.ai_addr, length: info.pointee.ai_addrlen, timeout: timeout) {
                lastError = failure
                _ = systemClose(fd)
                continue
            }
            let socket = TCPSocket(fd: fd)
            socket.configure()
            return socket
        }
        throw ParlorError.connectionFailed("cannot connect to \(host):\(port): \(lastError)")
    }

    /// A non-blocking connect bounded by `timeout`; nil on success, else what went wrong.
    private static func connect(_ fd: Int32, to address: UnsafeMutablePointer<sockaddr>?, length: socklen_t,
                                timeout: Duration) -> String? {
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        if systemConnect(fd, address, length) != 0 {
            guard errno == EINPROGRESS else { return errorText() }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let milliseconds = Int32(clamping: Int64(timeout.seconds * 1000))
            var ready: Int32
            repeat { ready = poll(&poller, 1, milliseconds) } while ready < 0 && errno == EINTR
            guard ready > 0 else { return ready == 0 ? "timed out after \(timeout)" : errorText() }
            var failure: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size)
            guard failure == 0 else { return String(cString: strerror(failure)) }
        }
        _ = fcntl(fd, F_SETFL, flags)
        return nil
    }

    private func configure() {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Bounds every later `receive` (nil: wait forever); a receive that times out throws `.timedOut`.
    func setReceiveTimeout(_ timeout: Duration?) {
        setTimeout(SO_RCVTIMEO, timeout)
    }

    func setSendTimeout(_ timeout: Duration?) {
        setTimeout(SO_SNDTIMEO, timeout)
    }

    private func setTimeout(_ option: Int32, _ timeout: Duration?) {
        var value = timeval()
        if let timeout {
            let seconds = max(timeout.seconds, 0.001)
            value.tv_sec = .init(seconds.rounded(.down))
            value.tv_usec = .init((seconds - seconds.rounded(.down)) * 1_000_000)
        }
        closed.withLock { isClosed in
            guard !isClosed else { return }
            setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// Writes all of `bytes` or throws.
    func send(_ bytes: [UInt8]) throws(ParlorError) {
        let failure: String? = closed.withLock { isClosed in
            guard !isClosed else { return "the connection is closed" }
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count, sendFlags) }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return errno == EAGAIN || errno == EWOULDBLOCK ? "send timed out" : Self.errorText() }
                offset += sent
            }
            return nil
        }
        if let failure { throw ParlorError.connectionLost(failure) }
    }

    /// Blocks for the next bytes, stored at the start of `chunk` (at most `chunk.count` of them; `.bytes(n)` says
    /// how many). Only one thread may receive at a time.
    func receive(into chunk: inout [UInt8]) throws(ParlorError) -> ReceiveResult {
        while true {
            let (count, error) = chunk.withUnsafeMutableBytes { raw in
                let count = recv(fd, raw.baseAddress, raw.count, 0)
                return (count, errno)
            }
            if count > 0 { return .bytes(count) }
            if count == 0 { return .endOfStream }
            switch error {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .timedOut
            case ECONNRESET, EBADF, ENOTCONN: return .endOfStream
            default: throw ParlorError.connectionLost("receive failed: \(Self.errorText())")
            }
        }
    }

    /// Ends both directions without closing the descriptor: a blocked `receive` returns end of stream.
    /// This is what a network drop looks like to the reader, and the testing hook uses exactly that.
    func shutdown() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            _ = systemShutdown(fd, Int32(SHUT_RDWR))
        }
    }

    /// Closes the descriptor once; later sends fail, later closes do nothing.
    func close() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            _ = systemClose(fd)
        }
    }

    deinit {
        close()
    }

    private static func errorText() -> String {
        String(cString: strerror(errno))
    }
}

// The system calls under other names, since TCPSocket's own `send`, `shutdown`, `close` and `connect` shadow them.
private func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, buffer, count, flags)
}

private func systemShutdown(_ fd: Int32, _ how: Int32) -> Int32 {
    shutdown(fd, how)
}

private func systemClose(_ fd: Int32) -> Int32 {
    close(fd)
}

private func systemConnect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
