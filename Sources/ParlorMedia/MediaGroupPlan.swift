import Synchronization

/// The receive loop's view of one session: who it is, which worker owns it, and which sender each of its slots
/// carries (by key). The session itself (DTLS, SRTP, rewriters) lives on its worker.
final class MediaSessionRecord {
    var setup: MediaSessionSetup
    /// Unique per opened session: a session replaced under the same id is another sender.
    let key: UInt64
    let worker: Int
    let loudness: SessionLoudness
    /// Slot index → the key of the sender it carries.
    var sources: [UInt64?]

    init(setup: MediaSessionSetup, key: UInt64, worker: Int) {
        self.setup = setup
        self.key = key
        self.worker = worker
        loudness = SessionLoudness()
        sources = Array(repeating: nil, count: setup.slots.count)
    }

    var id: UInt64 { setup.id }
    var member: String { setup.member }

    /// A renegotiation's slots: one whose mid and SSRC stay keeps its sender (as `MediaSession.update` keeps its rewriter).
    func update(_ setup: MediaSessionSetup) {
        var kept: [String: UInt64?] = [:]
        for (slot, source) in zip(self.setup.slots, sources) where kept[slot.mid] == nil { kept[slot.mid] = source }
        let oldSSRCs = Dictionary(self.setup.slots.map { ($0.mid, $0.ssrc) }, uniquingKeysWith: { first, _ in first })
        sources = setup.slots.map { slot in oldSSRCs[slot.mid] == slot.ssrc ? (kept[slot.mid] ?? nil) : nil }
        self.setup = setup
    }
}

/// When a sender was last loud, written by the worker that decrypts its packets and read by the receive loop when it
/// ranks senders for the slots: an atomic, so neither side takes a lock per packet.
final class SessionLoudness: Sendable {
    let lastLoudAt = Atomic<UInt64>(0)
}

/// The sessions of one group (a room), as the receive loop keeps them, and which of its members may send.
struct MediaGroup {
    /// In the order they opened: with no loudness to tell senders apart, earlier ones keep their slots.
    var records: [MediaSessionRecord] = []
    var senders: Set<String> = []
    /// Speakers of the group on other nodes whose packets come over links, by member (MediaServer+Links.swift).
    var remote: [String: RemoteSenderRecord] = [:]
    /// The last plan the workers were given.
    var plan = MediaGroupPlan()
}

/// What every worker needs to know of one group to forward its packets: which sessions may send (enforced where a
/// packet enters) and, for each subscriber, its worker and the sender each of its slots carries. Each worker keeps
/// what concerns its own sessions: the fan-out of its senders to its own subscribers, the workers its senders'
/// packets are handed to, and which handed-off senders its subscribers hear.
struct MediaGroupPlan: Sendable, Equatable {
    struct Subscriber: Sendable, Equatable {
        var key: UInt64
        var worker: Int
        var sources: [UInt64?]
    }

    var senders: Set<UInt64> = []
    var subscribers: [Subscriber] = []
}

/// A worker's counters, published once per batch for tests and metrics (any thread reads them).
final class MediaWorkerCounters: Sendable {
    let sessions = Atomic<Int>(0)
    let decrypted = Atomic<Int>(0)
    let handedOff = Atomic<Int>(0)
    let handoffsReceived = Atomic<Int>(0)
    let forwarded = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let linkedReceived = Atomic<Int>(0)
}

/// One worker's counters as tests read them (`MediaServer.workerStatistics`).
public struct MediaWorkerStatistics: Sendable, Equatable {
    /// Sessions the worker owns.
    public var sessions: Int
    /// SRTP packets it authenticated and decrypted (each speaker packet once, on its sender's worker).
    public var decrypted: Int
    /// Decrypted packets it handed to another worker (once per packet and worker with subscribers of it).
    public var handedOff: Int
    /// Packets other workers handed to it.
    public var handoffsReceived: Int
    /// Copies it encrypted and sent to its own subscribers.
    public var forwarded: Int
    public var dropped: Int
    /// Packets of speakers on other nodes it took from the links (once per packet, on one worker).
    public var linkedReceived: Int = 0
}
