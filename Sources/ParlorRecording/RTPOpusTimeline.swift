/// One speaker's Opus packets, as they arrive over RTP, put on the recording's time line: 48 kHz samples since the
/// recording started. Sorts packets within a jitter window, drops duplicates and packets too late for it, and says
/// where nothing was sent (loss, DTX, mute) so the owner fills the gap and the track keeps time.
///
/// A packet's place comes from its RTP timestamp (Opus over RTP counts 48 kHz samples, RFC 7587 §4.1), unwrapped past
/// 2^32, plus an offset fixed by the arrival of the first packet. The offset moves only when timestamps and the clock
/// disagree by more than a second (a restarted sender, a new SSRC) or when a packet newer than all released arrives
/// after its place was already filled (the path's delay grew): then it is written where the track stands.
public struct RTPOpusTimeline: Sendable {
    public enum Event: Sendable, Equatable {
        /// Nothing was received for this many samples.
        case gap(samples: Int64)
        case packet([UInt8], samples: Int)
    }

    public enum Disposition: Sendable, Equatable {
        case accepted
        case duplicate
        /// Its place on the time line is already written.
        case late
        /// libopus does not read it as an Opus packet.
        case invalid
        /// The jitter window already holds `maximumPending` packets.
        case overflow
    }

    struct Pending: Sendable {
        var position: Int64
        var sequence: UInt16
        var payload: [UInt8]
        var samples: Int
    }

    /// How long a packet waits for earlier ones, in samples.
    public let jitterWindow: Int64
    /// Where the time line stands: everything before it has been released.
    public private(set) var position: Int64
    private var offset: Int64?
    private var lastExtendedTimestamp: Int64 = 0
    private var lastReleasedSequence: UInt16?
    private var pending: [Pending] = []
    /// A bound on memory whatever the sender claims (10 s of 20 ms packets).
    public static let maximumPending = 500
    static let reanchorThreshold: Int64 = 48_000
    /// Placement slack: silence comes in steps of 2.5 ms, so a packet may find the track up to that far ahead of it.
    static let slack = Int64(OpusSilence.shortestFrame)

    /// `start`: where this speaker's time line begins (0 for a track of the whole recording; the mix starts a speaker
    /// where it joined).
    public init(start: Int64 = 0, jitterWindow: Duration = .milliseconds(100)) {
        position = start
        self.jitterWindow = RTPOpusTimeline.samples(in: jitterWindow)
    }

    public static func samples(in duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * Int64(Opus.sampleRate) + attoseconds / (1_000_000_000_000_000_000 / Int64(Opus.sampleRate))
    }

    public var pendingCount: Int { pending.count }

    /// Takes one packet: its RTP sequence number and timestamp, its payload, and when it arrived (samples since the
    /// recording started).
    public mutating func receive(sequence: UInt16, timestamp: UInt32, payload: [UInt8], arrival: Int64) -> Disposition {
        guard let samples = Opus.sampleCount(of: payload) else { return .invalid }
        let extended = extend(timestamp)
        let offset = self.offset ?? (arrival - extended)
        var place = extended + offset
        if self.offset == nil || place > arrival + Self.reanchorThreshold
            || (place < arrival - Self.reanchorThreshold && !isNear(sequence)) {
            self.offset = arrival - extended
            lastExtendedTimestamp = extended
            place = arrival
        }
        if pending.contains(where: { $0.sequence == sequence || $0.position == place }) { return .duplicate }
        if place + Self.slack < position {
            // A packet newer than any released, late: the path's delay grew. Move the offset so it and its followers
            // fit. An older one is a straggler whose time went by.
            guard let last = lastReleasedSequence, Int16(bitPattern: sequence &- last) > 0 else { return .late }
            self.offset! += position - place
            place = position
        }
        guard pending.count < Self.maximumPending else { return .overflow }
        let index = pending.firstIndex { $0.position > place } ?? pending.endIndex
        pending.insert(Pending(position: place, sequence: sequence, payload: payload, samples: samples), at: index)
        return .accepted
    }

    /// Releases what the jitter window no longer waits for, given the time now (samples since the recording started):
    /// packets placed before `now - jitterWindow`, gaps before and between them, and the gap up to that point.
    public mutating func release(now: Int64) -> [Event] {
        release(upTo: now - jitterWindow, everything: false)
    }

    /// At the end: every packet still waiting that starts before `end`, and the gap up to `end`. Packets placed after
    /// it (timestamps ahead of the clock) are dropped: the recording stopped before their time.
    public mutating func finish(end: Int64) -> [Event] {
        let events = release(upTo: end, everything: true)
        pending.removeAll()
        return events
    }

    private mutating func release(upTo horizon: Int64, everything: Bool) -> [Event] {
        var events: [Event] = []
        while let next = pending.first, everything ? next.position < horizon : next.position <= horizon {
            pending.removeFirst()
            if next.position + Self.slack < position { continue }  // overlaps what was written: its time went by
            if next.position - position >= Self.slack {
                events.append(.gap(samples: next.position - position))
                position = next.position
            }
            events.append(.packet(next.payload, samples: next.samples))
            position += Int64(next.samples)
            lastReleasedSequence = next.sequence
        }
        if horizon > position {
            events.append(.gap(samples: horizon - position))
            position = horizon
        }
        return events
    }

    /// The RTP timestamp unwrapped past 2^32: the nearest 64-bit value to the last one with these low 32 bits.
    private mutating func extend(_ timestamp: UInt32) -> Int64 {
        guard offset != nil else {
            lastExtendedTimestamp = Int64(timestamp)
            return lastExtendedTimestamp
        }
        let delta = Int64(Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: lastExtendedTimestamp)))
        let extended = lastExtendedTimestamp + delta
        if delta > 0 { lastExtendedTimestamp = extended }
        return extended
    }

    private func isNear(_ sequence: UInt16) -> Bool {
        let reference = lastReleasedSequence ?? pending.last?.sequence
        guard let reference else { return false }
        return abs(Int(Int16(bitPattern: sequence &- reference))) < 500
    }
}
