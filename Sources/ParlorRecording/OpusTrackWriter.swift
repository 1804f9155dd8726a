/// One speaker's Ogg Opus file, written from the RTP packets of their Opus stream without transcoding (RFC 7845).
///
/// The file starts at the recording's start and keeps its time: where the speaker sent nothing (loss, DTX, mute, not
/// yet joined) it holds Opus silence frames, so every track of a recording lines up with the others and with the
/// mix. Its pre-skip is 80 ms of such silence written first (RFC 7845 §4.2 recommends that much for a decoder to
/// settle), so what a player shows as 0:00 is the recording's start. Pages go out at least once per `flushInterval`
/// of audio: a file cut off at any byte plays up to its last whole page.
///
/// The owner feeds packets as they arrive and calls `advance` regularly (every 20–100 ms); each call returns the
/// bytes to append to the file, the headers included on the first.
public struct OpusTrackWriter: Sendable {
    public struct Statistics: Sendable, Equatable {
        public var packets = 0
        public var duplicates = 0
        public var late = 0
        public var invalid = 0
        public var overflow = 0
        /// Samples of silence written where nothing was received, the 80 ms before the start excluded.
        public var silenceSamples: Int64 = 0
    }

    /// Samples of silence before the recording's start, which players drop.
    public static let preSkip: UInt16 = 3_840

    public let head: OpusHead
    public let tags: OpusTags
    public private(set) var statistics = Statistics()
    /// Samples written so far, the pre-skip included: the granule position of the last packet.
    public private(set) var granulePosition: Int64 = 0
    private var timeline: RTPOpusTimeline
    private var ogg: OggStreamWriter
    private let flushInterval: Int64
    private var samplesSinceFlush: Int64 = 0
    /// Gap samples too short for a silence frame yet, carried into the next gap.
    private var silenceCarry: Int64 = 0
    private var wroteHeaders = false

    /// `start`: where the track begins, in 48 kHz samples since the recording started (0: at the start). `channelCount`
    /// as the stream's SDP says (`stereo=1`: 2).
    public init(serialNumber: UInt32, channelCount: UInt8 = 1, tags: OpusTags = OpusTags(), jitterWindow: Duration = .milliseconds(100),
                flushInterval: Duration = .seconds(1)) {
        head = OpusHead(channelCount: channelCount, preSkip: Self.preSkip)
        self.tags = tags
        timeline = RTPOpusTimeline(start: 0, jitterWindow: jitterWindow)
        ogg = OggStreamWriter(serialNumber: serialNumber)
        self.flushInterval = RTPOpusTimeline.samples(in: flushInterval)
    }

    /// Takes one RTP packet's sequence number, timestamp and payload; `arrival` is the time since the recording started.
    @discardableResult
    public mutating func receive(sequence: UInt16, timestamp: UInt32, payload: [UInt8], arrival: Duration) -> RTPOpusTimeline.Disposition {
        let disposition = timeline.receive(sequence: sequence, timestamp: timestamp, payload: payload,
                                           arrival: RTPOpusTimeline.samples(in: arrival))
        switch disposition {
        case .accepted: statistics.packets += 1
        case .duplicate: statistics.duplicates += 1
        case .late: statistics.late += 1
        case .invalid: statistics.invalid += 1
        case .overflow: statistics.overflow += 1
        }
        return disposition
    }

    /// Writes what the jitter window no longer waits for, silence up to `now` less the window, and a page when a
    /// flush interval's worth of audio waits. Returns the bytes to append to the file.
    public mutating func advance(to now: Duration) -> [UInt8] {
        var bytes = headersIfFirst()
        write(timeline.release(now: RTPOpusTimeline.samples(in: now)), into: &bytes)
        if samplesSinceFlush >= flushInterval {
            bytes += ogg.flush()
            samplesSinceFlush = 0
        }
        return bytes
    }

    /// Writes every packet still waiting and silence up to `end`, then the last page (end of stream).
    public mutating func finish(at end: Duration) -> [UInt8] {
        var bytes = headersIfFirst()
        write(timeline.finish(end: RTPOpusTimeline.samples(in: end)), into: &bytes)
        if !ogg.hasPendingPackets {
            // The end-of-stream flag rides on a page with a packet: the shortest silence frame, 2.5 ms.
            let frame = OpusSilence.frames[OpusSilence.frames.count - 1]
            append(frame.packet, samples: frame.samples, into: &bytes)
        }
        bytes += ogg.flush(endOfStream: true)
        return bytes
    }

    private mutating func headersIfFirst() -> [UInt8] {
        guard !wroteHeaders else { return [] }
        wroteHeaders = true
        var bytes = ogg.opusHeaderPages(head, tags)
        let preroll = OpusSilence.packets(covering: Int64(Self.preSkip))
        for frame in preroll.packets { append(frame.packet, samples: frame.samples, into: &bytes) }
        return bytes
    }

    private mutating func write(_ events: [RTPOpusTimeline.Event], into bytes: inout [UInt8]) {
        for event in events {
            switch event {
            case .packet(let payload, let samples):
                append(payload, samples: samples, into: &bytes)
            case .gap(let samples):
                let silence = OpusSilence.packets(covering: samples + silenceCarry)
                silenceCarry = silence.remainder
                for frame in silence.packets {
                    append(frame.packet, samples: frame.samples, into: &bytes)
                    statistics.silenceSamples += Int64(frame.samples)
                }
            }
        }
    }

    private mutating func append(_ packet: [UInt8], samples: Int, into bytes: inout [UInt8]) {
        granulePosition += Int64(samples)
        samplesSinceFlush += Int64(samples)
        bytes += ogg.append(packet: packet, granulePosition: granulePosition)
    }
}
