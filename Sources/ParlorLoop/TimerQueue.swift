/// A min-heap of deadlines. Cancelling drops the callback and leaves the heap entry to be skipped when it surfaces,
/// which keeps cancel O(1) for the common case of idle timers that are re-armed on every request.
struct TimerQueue {
    private struct Entry { let deadline: UInt64; let id: UInt64 }
    private var heap: [Entry] = []
    private var callbacks: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 0

    var count: Int { callbacks.count }

    /// Adds a timer; reports whether it became the earliest, so the timerfd needs re-arming.
    mutating func add(deadline: UInt64, _ body: @escaping () -> Void) -> (TimerID, Bool) {
        nextID &+= 1
        callbacks[nextID] = body
        let previousEarliest = earliestDeadline
        push(Entry(deadline: deadline, id: nextID))
        return (TimerID(value: nextID), previousEarliest.map { deadline < $0 } ?? true)
    }

    mutating func cancel(_ id: TimerID) {
        callbacks[id.value] = nil
        if callbacks.isEmpty { heap.removeAll(keepingCapacity: true) }
    }

    /// The earliest live deadline, discarding cancelled entries at the top.
    var earliestDeadline: UInt64? {
        mutating get {
            while let top = heap.first, callbacks[top.id] == nil { _ = pop() }
            return heap.first?.deadline
        }
    }

    /// Removes and returns the callback of the earliest timer due at `now`, if any.
    mutating func popDue(now: UInt64) -> (() -> Void)? {
        while let top = heap.first, top.deadline <= now {
            _ = pop()
            if let body = callbacks.removeValue(forKey: top.id) { return body }
        }
        return nil
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func pop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
                if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}
