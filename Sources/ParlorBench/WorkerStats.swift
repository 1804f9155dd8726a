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

    mutating func merge(_ part: WorkerStats) {
        joinRTT += part.joinRTT
        joinSentOffset += part.joinSentOffset
        initialJoinRTT += part.initialJoinRTT
        fanOut += part.fanOut
        fanOutSameNode += part.fanOutSameNode
        fanOutCrossNode += part.fanOutCrossNode
        if joinedByNode.count < part.joinedByNode.count { joinedByNode += Array(repeating: 0, count: part.joinedByNode.count - joinedByNode.count) }
        for (node, count) in part.joinedByNode.enumerated() { joinedByNode[node] += count }
        eventsInWindow += part.eventsInWindow
        eventsTotal += part.eventsTotal
        opsIssued += part.opsIssued
        opsSkipped += part.opsSkipped
        pingsAnswered += part.pingsAnswered
        closedCleanly += part.closedCleanly
        for (kind, count) in part.errors { errors[kind, default: 0] += count }
    }
}
