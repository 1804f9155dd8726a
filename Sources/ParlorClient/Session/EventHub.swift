import Foundation

/// Multicast for a session's events: each subscriber has its own unbounded stream; one ending (its consumer
/// cancelled or stopped) removes only that subscriber. After `finish`, new subscribers get an ended stream.
/// Elements that arrive while nobody is subscribed are kept for the next subscriber, so a single consumer that
/// starts reading late still sees everything from the start, as with a plain buffered stream.
/// With `replaysLatest`, a new subscriber first gets the newest element (a state's current value) instead.
/// An observer (`subscribe(observing: true)`) gets what arrives from then on and neither takes that backlog nor
/// counts as a subscriber for it: what arrives while only observers listen is still kept for the next subscriber.
final class EventHub<Element: Sendable>: Sendable {
    private let replaysLatest: Bool

    init(replaysLatest: Bool = false) {
        self.replaysLatest = replaysLatest
    }

    private struct State {
        var latest: Element?
        var unclaimed: [Element] = []
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var observers: Set<Int> = []
        var nextID = 0
        var isFinished = false
    }

    private let state = Locked(State())

    func subscribe(observing: Bool = false) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .unbounded)
        let replaysLatest = self.replaysLatest
        let id: Int? = state.withLock { state in
            if replaysLatest, let latest = state.latest { continuation.yield(latest) }
            if !observing {
                for element in state.unclaimed { continuation.yield(element) }
                state.unclaimed = []
            }
            guard !state.isFinished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            if observing { state.observers.insert(id) }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.subscribers[id] = nil
                state.observers.remove(id)
            }
        }
        return stream
    }

    func yield(_ element: Element) {
        let replaysLatest = self.replaysLatest
        // Yield outside the lock: a termination handler runs synchronously and takes the lock itself.
        let subscribers = state.withLock { state in
            state.latest = element
            if state.subscribers.count == state.observers.count && !replaysLatest { state.unclaimed.append(element) }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(element) }
    }

    func finish() {
        let subscribers = state.withLock { state in
            state.isFinished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
