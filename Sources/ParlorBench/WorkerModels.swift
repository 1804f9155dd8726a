#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec
import Synchronization

/// What every worker thread reads: the run's phase, progress counters, and the time each client last sent a churn
/// join (so whichever worker receives the matching member:joined can compute the fan-out latency).
struct WorkerSettings {
    var host: String
    var port: Int
    var namePrefix: String
    var churnRatePerSecond: Double
    var rampConcurrency: Int
    var closeTimeoutSeconds: Double = 5
}

/// Per-worker results, merged by the main thread after the workers exit.
struct WorkerStats {
    var joinRTT: [Int64] = []
    /// When each churn join was sent (ns since the window opened), parallel to joinRTT: for the time line.
    var joinSentOffset: [Int64] = []
    var initialJoinRTT: [Int64] = []
    var fanOut: [Int64] = []
    var eventsInWindow = 0
    var eventsTotal = 0
    var opsIssued = 0
    var opsSkipped = 0
    var pingsAnswered = 0
    var errors: [String: Int] = [:]
    var closedCleanly = 0

    mutating func error(_ kind: String) { errors[kind, default: 0] += 1 }
}

/// One simulated member: a WebSocket that joins a room, then leaves and joins again when the churn picks it.
final class BenchClient {
    enum State { case notStarted, connecting, handshaking, awaitingSession, initialJoin, joined, leaving, rejoining, closing, closed, failed }

    let index: Int
    let token: String
    let roomID: String
    var fd: Int32 = -1
    var state = State.notStarted
    var head: [UInt8] = []
    var decoder = WebSocketDecoder(role: .client, maxFrameSize: 1 << 20, maxMessageSize: 1 << 20)
    var output: [UInt8] = []
    var wantsWrite = false
    var opSentAt: Int64 = 0
    var nextTID = 1
    /// Position in its worker's client list: the epoll data word.
    var local = 0

    init(index: Int, token: String, roomID: String) {
        self.index = index
        self.token = token
        self.roomID = roomID
    }
}

/// An epoll loop driving a share of the clients on one thread.
