import ParlorClient

/// Which connection state `ParlorSession.expectState` waits for.
public enum StateMatcher: Sendable, CustomStringConvertible {
    case connected, reconnecting, resumed, closed

    public func matches(_ state: ParlorSession.ConnectionState) -> Bool {
        switch (self, state) {
        case (.connected, .connected), (.reconnecting, .reconnecting), (.resumed, .resumed), (.closed, .closed): true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .connected: "connected"
        case .reconnecting: "reconnecting"
        case .resumed: "resumed"
        case .closed: "closed"
        }
    }
}

/// `expectState` did not see the state in time.
public struct StateTimeout: Error, CustomStringConvertible {
    public let description: String
}

extension ParlorSession {
    /// Waits until the session is in (or next enters) a state fitting `matcher`, for at most `timeout`, and
    /// returns that state. The current state counts: after `simulateNetworkDrop()`, `.resumed` is found whether
    /// the resume already happened or not.
    @discardableResult
    public nonisolated func expectState(_ matcher: StateMatcher, within timeout: Duration = .seconds(5)) async throws(StateTimeout) -> ConnectionState {
        let states = connectionStates  // its own subscriber: cancelling it below ends nothing else
        let found: ConnectionState?? = await withTaskGroup(of: ConnectionState??.self) { group in
            group.addTask {
                for await state in states where matcher.matches(state) { return .some(state) }
                return .some(nil)  // the session closed
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch found {
        case .some(.some(let state)): return state
        case .some(.none): throw StateTimeout(description: "the session closed before it was \(matcher)")
        case .none:
            let current = await state
            throw StateTimeout(description: "the session was not \(matcher) within \(timeout); it is \(current)")
        }
    }
}
