import Foundation
import Testing
@testable import ParlorStore

/// The store's threads carry their names into the kernel (15 bytes at most), so `top -H`, perf and
/// /proc/PID/task/*/comm tell them apart; Foundation's `Thread.name` alone never got there.
@Suite struct ThreadNameTests {
    private func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .newlines) }
    }

    /// Threads name themselves as they start: wait for them (bounded) rather than for a fixed time.
    private func waitForNames(_ expected: [String]) -> [String] {
        let deadline = Date().addingTimeInterval(10)
        var names = threadNames()
        while !expected.allSatisfy(names.contains), Date() < deadline {
            usleep(2_000)
            names = threadNames()
        }
        return expected.filter { !names.contains($0) }
    }

    @Test func workPoolAndCheckpointerThreadsAreNamed() throws {
        let pool = BlockingWorkPool(name: "parlor-tpool", threadCount: 2)
        defer { pool.stop() }
        try withTemporaryDirectory { directory in
            let database = try Database(DatabaseConfiguration(path: "\(directory)/parlor.db"))
            defer { database.close() }
            let missing = waitForNames(["parlor-tpool-0", "parlor-tpool-1", Checkpointer.threadName])
            #expect(missing.isEmpty, "threads not named \(missing): \(threadNames())")
        }
    }
}
