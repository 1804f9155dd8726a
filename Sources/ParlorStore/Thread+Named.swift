import CParlorSystem
import Foundation

extension Thread {
    /// An unstarted thread that gives itself `name` as it starts, so `top -H`, perf and /proc show it: Foundation's
    /// `Thread.name` set before `start()` never reaches the kernel. The kernel keeps 15 bytes of a name.
    public static func named(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        let thread = Thread {
            _ = parlor_name_current_thread(name)
            body()
        }
        thread.name = name
        return thread
    }
}
