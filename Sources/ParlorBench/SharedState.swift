#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec
import Synchronization

/// What every worker thread reads: the run's phase, progress counters, and the time each client last sent a churn
/// join (so whichever worker receives the matching member:joined can compute the fan-out latency).
final class SharedState: @unchecked Sendable {  // joinSentAt is written by the owning worker, read by all (aligned 64-bit words)
    enum Phase: Int { case ramp = 0, churn = 1, drain = 2, close = 3 }

    let phase = Atomic<Int>(Phase.ramp.rawValue)
    let joinedCount = Atomic<Int>(0)
    let failedCount = Atomic<Int>(0)
    let openCount = Atomic<Int>(0)
    let outstandingOps = Atomic<Int>(0)
    let joinSentAt: UnsafeMutablePointer<Int64>
    let clientCount: Int
    let roomCount: Int
    let nodeCount: Int

    init(clientCount: Int, roomCount: Int = 1, nodeCount: Int = 1) {
        self.clientCount = clientCount
        self.roomCount = roomCount
        self.nodeCount = nodeCount
        joinSentAt = .allocate(capacity: clientCount)
        joinSentAt.initialize(repeating: 0, count: clientCount)
    }

    deinit { joinSentAt.deallocate() }

    func node(ofClient index: Int) -> Int { Endpoint.node(ofClient: index, rooms: roomCount, nodes: nodeCount) }

    var currentPhase: Phase { Phase(rawValue: phase.load(ordering: .acquiring)) ?? .close }
}
