import ParlorClient

/// Records a session's events from the moment it is made, and waits for the ones a test expects, with a deadline.
///
/// Each recorder is its own subscriber of `session.events`: make as many as you like; stopping one (or a wait
/// that times out) never ends the session's events for the others.
///
///     let recorder = EventRecorder(bob)
///     let left = try await recorder.expect(.memberLeft(reason: .dropped, name: "alice"), within: .seconds(5))
public actor EventRecorder {
    /// Everything received so far, in order.
    public private(set) var received: [RoomEvent] = []
    /// True once the session closed (no more events will come).
    public private(set) var isFinished = false
    /// Events before this index were handed out by `expect` (or skipped by it): the next `expect` looks after them.
    private var cursor = 0
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiterID = 0

    private struct Waiter {
        let matcher: EventMatcher
        let continuation: CheckedContinuation<Int?, Never>
    }

    /// Starts recording at once: events the session receives after this line are kept (and any it received while
    /// nobody at all was reading `events`).
    public init(_ session: ParlorSession) {
        let events = session.events  // subscribed here, synchronously, so nothing after init is missed
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.record(event)
            }
            await self?.record(nil)
        }
    }

    /// The first event after the previous match that fits `matcher`, already received or arriving within
    /// `timeout`. Events in between stay in `received` but are passed over. Throws `EventTimeout` listing what
    /// did arrive and naming the line of this call (a test framework reports a thrown error at the test's own line).
    @discardableResult
    public func expect(_ matcher: EventMatcher, within timeout: Duration = .seconds(5),
                       fileID: String = #fileID, line: Int = #line) async throws(EventTimeout) -> RoomEvent {
        let location = "\(fileID):\(line)"
        if let index = firstMatch(matcher, from: cursor) { return take(index) }
        guard !isFinished else { throw failure(matcher, timeout, ended: true, at: location) }
        let id = nextWaiterID
        nextWaiterID += 1
        let index = await withCheckedContinuation { continuation in
            waiters[id] = Waiter(matcher: matcher, continuation: continuation)
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.expire(id)
            }
        }
        guard let index else { throw failure(matcher, timeout, ended: isFinished, at: location) }
        return take(index)
    }

    /// Fails if an event fitting `matcher` arrives (or arrived since the previous match) within `duration`; the
    /// error names the line of this call.
    public func expectNone(_ matcher: EventMatcher, within duration: Duration,
                           fileID: String = #fileID, line: Int = #line) async throws(UnexpectedEvent) {
        if let found = try? await expect(matcher, within: duration) {
            throw UnexpectedEvent(description: "\(fileID):\(line): did not expect \(matcher) but got \(found.summary)")
        }
    }

    /// The events received so far that fit `matcher` (ignores the cursor).
    public func all(_ matcher: EventMatcher) -> [RoomEvent] { received.filter(matcher.matches) }

    private func firstMatch(_ matcher: EventMatcher, from start: Int) -> Int? {
        guard start < received.count else { return nil }
        return received[start...].firstIndex(where: matcher.matches)
    }

    private func take(_ index: Int) -> RoomEvent {
        cursor = max(cursor, index + 1)
        return received[index]
    }

    private func record(_ event: RoomEvent?) {
        guard let event else {
            isFinished = true
            let waiting = waiters
            waiters = [:]
            for waiter in waiting.values { waiter.continuation.resume(returning: nil) }
            return
        }
        received.append(event)
        let index = received.count - 1
        // The oldest waiter first, so two waits for the same kind get successive events.
        for id in waiters.keys.sorted() where index >= cursor {
            guard let waiter = waiters[id], waiter.matcher.matches(event) else { continue }
            waiters[id] = nil
            waiter.continuation.resume(returning: index)
            return
        }
    }

    private func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: nil)
    }

    private func failure(_ matcher: EventMatcher, _ timeout: Duration, ended: Bool, at location: String) -> EventTimeout {
        EventTimeout(expected: matcher.description, timeout: timeout, sessionEnded: ended, received: received.map(\.summary),
                     location: location)
    }
}

/// `EventRecorder.expect` saw no matching event in time (or the session ended first).
public struct EventTimeout: Error, CustomStringConvertible {
    public let expected: String
    public let timeout: Duration
    public let sessionEnded: Bool
    /// One line per event the recorder did receive.
    public let received: [String]
    /// The `expect` call that waited, as FILE:LINE (`#fileID`).
    public let location: String

    public var description: String {
        let why = sessionEnded ? "the session ended without" : "no"
        let list = received.isEmpty ? "nothing" : "\n  " + received.joined(separator: "\n  ")
        return "\(location): \(why) \(expected) within \(timeout); received \(received.count) event(s): \(list)"
    }
}

/// `EventRecorder.expectNone` saw the event it should not have.
public struct UnexpectedEvent: Error, CustomStringConvertible {
    public let description: String
}
