import Foundation

/// The packets on their way from the media workers to a recorder's thread: bounded, so a recorder that falls behind
/// costs dropped packets (counted), never the workers' time or unbounded memory. `append` holds the lock only to
/// add one element; the recorder's thread takes everything at once.
final class RecorderQueue: @unchecked Sendable {  // every field is touched only holding `condition`
    struct Item {
        var rtp: [UInt8]
        var member: String
        var arrival: UInt64
    }

    let capacity: Int
    private let condition = NSCondition()
    private var items: [Item] = []
    private var dropped = 0
    private var stopReason: RecordingStopReason?

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// false when the queue was full or the recording is stopping: the packet is dropped (and counted when full).
    @discardableResult
    func append(_ item: Item) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard stopReason == nil else { return false }
        guard items.count < capacity else {
            dropped += 1
            return false
        }
        items.append(item)
        return true
    }

    /// Asks the recorder to stop; the first reason wins.
    func requestStop(_ reason: RecordingStopReason) {
        condition.lock()
        if stopReason == nil { stopReason = reason }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `deadline` (monotonic ns) or a stop request, then takes every queued packet and the stop reason.
    /// Packets do not wake the thread: it takes them at its next tick, every few tens of milliseconds.
    func take(waitingUntil deadline: UInt64) -> (items: [Item], stop: RecordingStopReason?) {
        condition.lock()
        defer { condition.unlock() }
        while stopReason == nil {
            let now = MonotonicTime.now()
            guard now < deadline else { break }
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(deadline - now) / 1e9))
        }
        // A fresh array for the next batch, sized like this one: the taken one is the recorder's to read.
        let taken = items
        items = []
        items.reserveCapacity(taken.count)
        return (taken, stopReason)
    }

    var droppedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return dropped
    }
}

/// CLOCK_MONOTONIC in ns: the media workers' clock, which the arrivals given to `append` come from.
enum MonotonicTime {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
