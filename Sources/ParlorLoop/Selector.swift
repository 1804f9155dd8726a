#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem
import Synchronization

/// What a registered file descriptor wants to hear about.
public struct Interest: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let read = Interest(rawValue: 1)
    public static let write = Interest(rawValue: 2)

    var epollEvents: UInt32 {
        var events: UInt32 = 0
        // RDHUP only with reads: a paused reader must not be woken, level-triggered, by a peer's half-close.
        if contains(.read) { events |= UInt32(EPOLLIN.rawValue | EPOLLRDHUP.rawValue) }
        if contains(.write) { events |= UInt32(EPOLLOUT.rawValue) }
        return events
    }
}

/// One readiness report from epoll.
struct SelectorEvent {
    enum Source { case wakeUp, timer, registration(fd: Int32, id: UInt32) }
    let source: Source
    let readable: Bool
    let writable: Bool
    let hangUp: Bool
}

/// Level-triggered epoll with one eventfd to wake the loop and one timerfd armed to the earliest deadline.
/// Each registration carries an id beside its fd, so an event for a closed-and-reused fd is recognised as stale.
final class Selector {
    private let epollFD: Int32
    private let wakeUpFD: Int32
    private let timerFD: Int32
    private var events: [epoll_event]
    private static let wakeUpTag: UInt64 = UInt64.max
    private static let timerTag: UInt64 = UInt64.max - 1

    init(maxEventsPerWait: Int = 256) throws(SystemError) {
        epollFD = try retryingOnInterrupt("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        wakeUpFD = try retryingOnInterrupt("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
        timerFD = try retryingOnInterrupt("timerfd_create") {
            timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        }
        events = Array(repeating: epoll_event(), count: maxEventsPerWait)
        try add(fd: wakeUpFD, events: UInt32(EPOLLIN.rawValue), data: Self.wakeUpTag)
        try add(fd: timerFD, events: UInt32(EPOLLIN.rawValue), data: Self.timerTag)
    }

    deinit {
        close(timerFD)
        close(wakeUpFD)
        close(epollFD)
    }

    private static func tag(fd: Int32, id: UInt32) -> UInt64 { UInt64(id) << 32 | UInt64(UInt32(bitPattern: fd)) }

    private func add(fd: Int32, events: UInt32, data: UInt64) throws(SystemError) {
        var event = parlor_epoll_event(events, data)
        _ = try retryingOnInterrupt("epoll_ctl(ADD)") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
    }

    func register(fd: Int32, id: UInt32, interest: Interest) throws(SystemError) {
        try add(fd: fd, events: interest.epollEvents, data: Self.tag(fd: fd, id: id))
    }

    func reregister(fd: Int32, id: UInt32, interest: Interest) throws(SystemError) {
        var event = parlor_epoll_event(interest.epollEvents, Self.tag(fd: fd, id: id))
        _ = try retryingOnInterrupt("epoll_ctl(MOD)") { epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) }
    }

    func deregister(fd: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
    }

    /// eventfd writes so far (tests count the wake-ups a loop was sent).
    let wakeUpWrites = Atomic<Int>(0)

    /// Wakes a loop blocked in `wait`; safe from any thread.
    func wakeUp() {
        wakeUpWrites.add(1, ordering: .relaxed)
        var one: UInt64 = 1
        _ = write(wakeUpFD, &one, 8)
    }

    /// Arms the timerfd to fire at `deadline` (monotonic nanoseconds), or disarms it for nil.
    func armTimer(at deadline: UInt64?) {
        var spec = itimerspec()
        if let deadline {
            let d = max(deadline, 1)  // an all-zero it_value would disarm
            spec.it_value.tv_sec = Int(d / 1_000_000_000)
            spec.it_value.tv_nsec = Int(d % 1_000_000_000)
        }
        _ = timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    /// Blocks until something is ready (or returns at once with what is ready, `blocking` false); calls `body` for
    /// each event.
    func wait(blocking: Bool = true, _ body: (SelectorEvent) -> Void) throws(SystemError) {
        let count = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), blocking ? -1 : 0)
        }
        if count < 0 {
            if errno == EINTR { return }
            throw SystemError("epoll_wait")
        }
        for index in 0..<Int(count) {
            let (data, flags) = withUnsafePointer(to: &events[index]) {
                (parlor_epoll_event_data($0), parlor_epoll_event_events($0))
            }
            let readable = flags & UInt32(EPOLLIN.rawValue | EPOLLPRI.rawValue) != 0
            let writable = flags & UInt32(EPOLLOUT.rawValue) != 0
            let hangUp = flags & UInt32(EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0
            switch data {
            case Self.wakeUpTag:
                var value: UInt64 = 0
                _ = read(wakeUpFD, &value, 8)
                body(SelectorEvent(source: .wakeUp, readable: true, writable: false, hangUp: false))
            case Self.timerTag:
                var value: UInt64 = 0
                _ = read(timerFD, &value, 8)
                body(SelectorEvent(source: .timer, readable: true, writable: false, hangUp: false))
            default:
                let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: data))
                let id = UInt32(truncatingIfNeeded: data >> 32)
                body(SelectorEvent(source: .registration(fd: fd, id: id), readable: readable, writable: writable, hangUp: hangUp))
            }
        }
    }
}
