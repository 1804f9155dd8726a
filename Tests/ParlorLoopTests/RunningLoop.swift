@testable import ParlorLoop

/// Runs `body` with a started loop named `name`, stopped and joined afterwards.
func withRunningLoop(named name: String, _ body: (EventLoop) throws -> Void) throws {
    let loop = try EventLoop(name: name)
    loop.start()
    defer {
        loop.stop()
        loop.waitUntilStopped()
    }
    try body(loop)
}
