#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import ParlorLoop

/// Bounds the stop (`--shutdown-timeout`): a stop step may block where no timeout of ours reaches, such as libpq
/// looking up the name of a PostgreSQL host whose name server is gone (connect_timeout does not cover name lookup).
/// When the time is up, or a second signal comes, it logs where the stop was and ends the process with `_exit(1)`:
/// what is committed stays committed, and a node lease left unreleased expires on its own.
final class ShutdownDeadline: Sendable {
    private let step = Locked("starting")

    /// Starts counting `seconds` now; `signals` is signalled by every later SIGTERM/SIGINT.
    init(seconds: Double, signals: DispatchSemaphore, logger: Logger) {
        let thread = Thread { [self] in
            let secondSignal = signals.wait(timeout: .now() + seconds) == .success
            let stuckAt = step.withLock { $0 }
            if secondSignal {
                logger.warning("second signal during shutdown: exiting now", ["step": stuckAt])
            } else {
                logger.warning("shutdown did not finish within \(Self.format(seconds)) s (--shutdown-timeout): exiting without it",
                               ["step": stuckAt])
            }
            _exit(1)
        }
        thread.name = "shutdown-deadline"
        thread.start()
    }

    /// The step the stop is in, for the warning.
    func enter(_ name: String) { step.withLock { $0 = name } }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
