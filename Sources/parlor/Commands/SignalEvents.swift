import Dispatch
import Foundation

/// Signals other than Ctrl-C as a stream, for the commands a script steers from outside (`parlor join`: SIGUSR1
/// drops the connection and holds reconnects, SIGUSR2 lets them go).
enum SignalEvents {
    private static let sources = Sources()

    /// Each arrival of `number` yields once. Call before telling a script it may signal (the "joined" line): until
    /// then the signal's default action (ending the process) applies.
    static func stream(_ number: Int32) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        sources.install(number) { continuation.yield() }
        return stream
    }

    private final class Sources: @unchecked Sendable {  // installed on the main task before any signal can fire
        private let lock = NSLock()
        private var sources: [DispatchSourceSignal] = []

        func install(_ number: Int32, _ handler: @escaping @Sendable () -> Void) {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            lock.withLock { sources.append(source) }
        }
    }
}
