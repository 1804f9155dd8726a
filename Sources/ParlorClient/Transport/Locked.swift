import Foundation

/// A value guarded by a lock, for the few pieces of state that threads (not tasks) share.
/// `Synchronization.Mutex` needs macOS 15 / iOS 18; the package supports macOS 14 / iOS 17, so this uses NSLock.
final class Locked<State>: @unchecked Sendable {  // Sendable: every access to `state` goes through `lock`.
    private let lock = NSLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

/// Runs blocking socket work on a dedicated thread, so it never ties up a thread of Swift's cooperative pool.
enum Blocking {
    static func run<T: Sendable>(_ name: String, _ work: @escaping @Sendable () throws(ParlorError) -> T) async throws(ParlorError) -> T {
        let result: Result<T, ParlorError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: Result { () throws(ParlorError) -> T in try work() })
            }
            thread.name = name
            thread.start()
        }
        return try result.get()
    }
}

extension Duration {
    /// Seconds as a floating-point number (socket timeouts and poll want numbers, not Durations).
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
