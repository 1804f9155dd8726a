import Foundation
import ParlorApp
@testable import ParlorClient

struct TestTimeout: Error, CustomStringConvertible {
    let description: String
}

/// Starts Parlor in-process (127.0.0.1, a free port, in-memory database) and returns it with a client for it.
func startServer(_ configure: (inout AppConfiguration) -> Void = { _ in }) throws -> (ParlorApplication, ParlorServer) {
    var configuration = AppConfiguration.testing()
    // Under `make tsan` the whole run is slow enough that a room can sit empty between create and join for more
    // than the default 5 minutes, and close.
    configuration.rooms.defaultRoomTTL = configuration.rooms.maxRoomTTL
    configure(&configuration)
    let app = try buildApplication(configuration)
    return (app, ParlorServer(host: "127.0.0.1", port: app.port, configuration: .fastForTests))
}

extension ParlorClientConfiguration {
    /// Short timeouts and quick, deterministic reconnects so failures show up fast.
    static var fastForTests: ParlorClientConfiguration {
        var configuration = ParlorClientConfiguration()
        configuration.connectTimeout = .seconds(5)
        configuration.requestTimeout = .seconds(5)
        configuration.reconnect = ReconnectPolicy(maxAttempts: 5, initialDelay: .milliseconds(20), maxDelay: .milliseconds(200), jitter: 0)
        return configuration
    }
}

extension ParlorServer {
    /// auth + connect in one go.
    func session(_ name: String) async throws -> ParlorSession {
        let auth = try await auth(name: name)
        return try await connect(token: auth.jwt)
    }
}

/// Consumes a stream in the background and lets a test wait, with a deadline, for an element it expects.
actor Collector<Element: Sendable> {
    private(set) var items: [Element] = []
    private(set) var isFinished = false
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiterID = 0

    private struct Waiter {
        let predicate: @Sendable (Element) -> Bool
        let continuation: CheckedContinuation<Element?, Never>
    }

    static func consuming(_ stream: AsyncStream<Element>) -> Collector {
        let collector = Collector()
        Task {
            for await item in stream { await collector.append(item) }
            await collector.finish()
        }
        return collector
    }

    private func append(_ item: Element) {
        items.append(item)
        for (id, waiter) in waiters where waiter.predicate(item) {
            waiters[id] = nil
            waiter.continuation.resume(returning: item)
        }
    }

    private func finish() {
        isFinished = true
        let waiting = waiters
        waiters = [:]
        for waiter in waiting.values { waiter.continuation.resume(returning: nil) }
    }

    /// The first element, already collected or arriving within `timeout`, that matches `predicate`.
    func first(timeout: Duration = .seconds(10), _ what: String = "an element",
               where predicate: @escaping @Sendable (Element) -> Bool) async throws -> Element {
        if let found = items.first(where: predicate) { return found }
        guard !isFinished else { throw TestTimeout(description: "stream ended without \(what); got \(items)") }
        let id = nextWaiterID
        nextWaiterID += 1
        let found = await withCheckedContinuation { continuation in
            waiters[id] = Waiter(predicate: predicate, continuation: continuation)
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.expire(id)
            }
        }
        guard let found else { throw TestTimeout(description: "no \(what) within \(timeout); got \(items)") }
        return found
    }

    /// Waits (bounded) until the stream has ended.
    func waitUntilFinished(timeout: Duration = .seconds(10)) async throws {
        if !isFinished { _ = try? await first(timeout: timeout, "the end") { _ in false } }
        guard isFinished else { throw TestTimeout(description: "stream did not end within \(timeout)") }
    }

    private func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: nil)
    }
}

extension RoomEvent {
    func isMember(_ kind: Kind, _ memberID: String) -> Bool { type == kind && self.memberID == memberID }
}

extension ParlorSession.ConnectionState {
    var isReconnecting: Bool { if case .reconnecting = self { true } else { false } }
    var isResumed: Bool { if case .resumed = self { true } else { false } }
    var isClosed: Bool { if case .closed = self { true } else { false } }
}

/// Runs `body`, expecting it to throw a ParlorError, and returns that error.
func parlorError(_ body: () async throws -> Void) async -> ParlorError? {
    do {
        try await body()
        return nil
    } catch let error as ParlorError {
        return error
    } catch {
        return nil
    }
}
