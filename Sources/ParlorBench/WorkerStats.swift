/// Per-worker results, merged by the main thread after the workers' loops stopped.
struct WorkerStats {
    var joinRTT: [Int64] = []
    /// When each churn join was sent (ns since the window opened), parallel to joinRTT: for the time line.
    var joinSentOffset: [Int64] = []
    var initialJoinRTT: [Int64] = []
    var fanOut: [Int64] = []
    /// fanOut split by whether the receiver is on the joiner's node (always "same" with one --url).
    var fanOutSameNode: [Int64] = []
    var fanOutCrossNode: [Int64] = []
    /// Clients joined when the close began, per node.
    var joinedByNode: [Int] = []
    var eventsInWindow = 0
    var eventsTotal = 0
    var opsIssued = 0
    var opsSkipped = 0
    var pingsAnswered = 0
    var errors: [String: Int] = [:]
    var closedCleanly = 0

    mutating func error(_ kind: String) { errors[kind, default: 0] += 1 }

    /// The samples a merge appends (joinRTT and joinSentOffset stay parallel) and the counters it adds up.
    private static var samples: [WritableKeyPath<WorkerStats, [Int64]>] {
        [\.joinRTT, \.joinSentOffset, \.initialJoinRTT, \.fanOut, \.fanOutSameNode, \.fanOutCrossNode]
    }
    private static var counters: [WritableKeyPath<WorkerStats, Int>] {
        [\.eventsInWindow, \.eventsTotal, \.opsIssued, \.opsSkipped, \.pingsAnswered, \.closedCleanly]
    }

    mutating func merge(_ part: WorkerStats) {
        for field in Self.samples { self[keyPath: field] += part[keyPath: field] }
        for field in Self.counters { self[keyPath: field] += part[keyPath: field] }
        if joinedByNode.count < part.joinedByNode.count { joinedByNode += Array(repeating: 0, count: part.joinedByNode.count - joinedByNode.count) }
        for (node, count) in part.joinedByNode.enumerated() { joinedByNode[node] += count }
        for (kind, count) in part.errors { errors[kind, default: 0] += count }
    }
}
