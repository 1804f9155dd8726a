#if canImport(Glibc)
import ParlorLoop
import Glibc
#endif
import ParlorCodec

/// The Date header value, formatted once per second rather than once per response.
enum HTTPDateCache {
    private static let cached = Locked<(second: Int, value: String)>((-1, ""))

    static func current() -> String {
        let now = Int(time(nil))
        return cached.withLock { entry in
            if entry.second != now { entry = (now, HTTPDate.format(secondsSince1970: now)) }
            return entry.value
        }
    }
}
