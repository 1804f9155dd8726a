#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex. Parlor uses this rather than `Synchronization.Mutex` because on Linux that one
/// locks with raw futex calls ThreadSanitizer cannot see, so `make tsan` would report races that are not there.
public final class Locked<Value>: @unchecked Sendable {  // `value` is only touched with `mutex` held
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @discardableResult
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
