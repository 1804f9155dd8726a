#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on CLOCK_MONOTONIC: deadlines that wall-clock changes cannot move.
public enum MonotonicClock {
    public static func now() -> UInt64 {
        let time = readClock(CLOCK_MONOTONIC)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

/// Unix time by CLOCK_REALTIME: for what is stored and shown, never for a deadline.
public enum WallClock {
    public static func nowMilliseconds() -> Int64 {
        let time = readClock(CLOCK_REALTIME)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}

private func readClock(_ clock: clockid_t) -> timespec {
    var time = timespec()
    clock_gettime(clock, &time)
    return time
}

/// A span of time in nanoseconds, written the way configuration speaks (seconds, milliseconds).
public struct TimeSpan: Sendable, Hashable, Comparable {
    public var nanoseconds: UInt64
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
    public static func seconds(_ s: Double) -> TimeSpan { TimeSpan(nanoseconds: UInt64(max(0, s) * 1e9)) }
    public static func milliseconds(_ ms: Int) -> TimeSpan { TimeSpan(nanoseconds: UInt64(max(0, ms)) * 1_000_000) }
    public var seconds: Double { Double(nanoseconds) / 1e9 }
    public static func < (a: TimeSpan, b: TimeSpan) -> Bool { a.nanoseconds < b.nanoseconds }
}
