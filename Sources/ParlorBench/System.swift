#if canImport(Glibc)
import Glibc
#endif

// ParlorLoop accepts connections but has no public way to open one (Connection's initialiser and
// EventLoop.register are internal), and Glibc's Swift overlay does not expose epoll. So the generator runs its own
// small epoll loop, reaching epoll through dlsym: no C target of its own, nothing added to ParlorLoop.

/// epoll(7) through dlsym. `struct epoll_event` is packed on x86_64 (12 bytes: events at 0, data at 4).
enum Epoll {
    typealias Create1 = @convention(c) (Int32) -> Int32
    typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32

    static let eventSize = 12
    static let input: UInt32 = 0x001
    static let output: UInt32 = 0x004
    static let error: UInt32 = 0x008
    static let hangUp: UInt32 = 0x010
    static let add: Int32 = 1
    static let delete: Int32 = 2
    static let modify: Int32 = 3
    static let closeOnExec: Int32 = 0x80000

    private static func symbol<T>(_ name: String, as type: T.Type) -> T {
        guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            fatalError("parlor-bench: \(name) not found in libc")
        }
        return unsafeBitCast(pointer, to: type)
    }

    static func create() -> Int32 { symbol("epoll_create1", as: Create1.self)(closeOnExec) }
}

/// One epoll instance with its event array; the function pointers are looked up once.
struct Poller {
    let fd: Int32
    private let controlFunction: Epoll.Control
    private let waitFunction: Epoll.Wait
    private let events: UnsafeMutableRawPointer
    let capacity = 1024

    init() {
        fd = Epoll.create()
        precondition(fd >= 0, "epoll_create1 failed: errno \(errno)")
        controlFunction = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "epoll_ctl"), to: Epoll.Control.self)
        waitFunction = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "epoll_wait"), to: Epoll.Wait.self)
        events = UnsafeMutableRawPointer.allocate(byteCount: capacity * Epoll.eventSize, alignment: 8)
    }

    func release() {
        events.deallocate()
        Glibc.close(fd)
    }

    @discardableResult
    func control(_ op: Int32, _ socket: Int32, events mask: UInt32, data: UInt64) -> Int32 {
        var raw = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &raw) { buffer in
            buffer.storeBytes(of: mask, toByteOffset: 0, as: UInt32.self)
            buffer.storeBytes(of: data, toByteOffset: 4, as: UInt64.self)
            return controlFunction(fd, op, socket, buffer.baseAddress)
        }
    }

    /// Waits up to `timeoutMilliseconds` and calls `body(events, data)` for each ready descriptor.
    func wait(timeoutMilliseconds: Int32, _ body: (UInt32, UInt64) -> Void) {
        let count = waitFunction(fd, events, Int32(capacity), timeoutMilliseconds)
        guard count > 0 else { return }
        for index in 0..<Int(count) {
            let base = events + index * Epoll.eventSize
            let mask = base.loadUnaligned(as: UInt32.self)
            let data = (base + 4).loadUnaligned(as: UInt64.self)
            body(mask, data)
        }
    }
}

enum Clock {
    /// CLOCK_MONOTONIC in nanoseconds; comparable across threads.
    static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}

enum Sockets {
    /// A non-blocking TCP socket with a connect to 127.0.0.1-style `host`:`port` under way.
    static func startConnect(host: String, port: Int) -> (fd: Int32, error: Int32) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return (-1, errno) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            Glibc.close(fd)
            return (-1, EINVAL)
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result == 0 || errno == EINPROGRESS { return (fd, 0) }
        let failure = errno
        Glibc.close(fd)
        return (-1, failure)
    }

    /// SO_ERROR after a non-blocking connect became writable.
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length)
        return value
    }

    /// A blocking connected socket, for the setup requests.
    static func connectBlocking(host: String, port: Int) -> Int32? {
        let (fd, error) = startConnect(host: host, port: port)
        guard fd >= 0, error == 0 else { return nil }
        var poll = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard Glibc.poll(&poll, 1, 5000) == 1, pendingError(fd) == 0 else {
            Glibc.close(fd)
            return nil
        }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// Writes all of `bytes` or returns false.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Raises the soft descriptor limit to the hard one.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }
}

/// CPU and memory of a process, from /proc.
struct ProcessSample {
    var cpuSeconds: Double
    var rssKiB: Int
    var peakRSSKiB: Int
    var threads: Int

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Reads /proc/<pid>/stat (utime + stime, fields 14 and 15) and /proc/<pid>/status (VmRSS, VmHWM).
    static func read(pid: Int32) -> ProcessSample? {
        guard let stat = readFile("/proc/\(pid)/stat"), let status = readFile("/proc/\(pid)/status") else { return nil }
        // The command name may hold spaces; fields are counted after its closing parenthesis.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime is field 14 → index 11, stime field 15 → index 12, threads field 20 → 17.
        guard fields.count > 17, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        var sample = ProcessSample(cpuSeconds: (user + system) / ticksPerSecond, rssKiB: 0, peakRSSKiB: 0, threads: Int(fields[17]) ?? 0)
        for line in status.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { sample.rssKiB = kibibytes(line) }
            if line.hasPrefix("VmHWM:") { sample.peakRSSKiB = kibibytes(line) }
        }
        return sample
    }

    private static func kibibytes(_ line: Substring) -> Int {
        Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 4096) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// This process's own CPU time (all threads), from getrusage.
func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

func ownPeakRSSKiB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss)
}

/// Random bytes for WebSocket keys and masks (not security relevant here).
struct FastRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    mutating func mask() -> (UInt8, UInt8, UInt8, UInt8) {
        let value = next()
        return (UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
                UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24))
    }
}

/// Busy CPU seconds of the whole machine (all cores), from the first line of /proc/stat.
func machineBusyCPUSeconds() -> Double {
    guard let stat = ProcessSample.readFile("/proc/stat"), let line = stat.split(separator: "\n").first else { return 0 }
    let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard fields.count >= 8 else { return 0 }
    // user nice system idle iowait irq softirq steal: everything but idle and iowait.
    let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
    return busy / ProcessSample.ticksPerSecond
}
