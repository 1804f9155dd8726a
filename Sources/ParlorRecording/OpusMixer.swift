/// The mix of a recording: each speaker's Opus packets decoded (libopus), summed sample-aligned on the recording's
/// time line, saturated instead of wrapped where the sum leaves 16 bits, and encoded once (libopus) into an Ogg Opus
/// stream, 20 ms a packet. The pre-skip is the encoder's own delay, so 0:00 is the recording's start.
///
/// Like `OpusTrackWriter`, fed packets as they arrive and `advance`d regularly; each call returns bytes to append.
/// Not Sendable (it owns libopus state): one thread drives it.
public final class OpusMixer<Speaker: Hashable> {
    final class Input {
        var timeline: RTPOpusTimeline
        let decoder: OpusDecoder
        /// Decoded samples; those from `consumed` on are from the mix's position on.
        var pcm: [Int16] = []
        var consumed = 0

        /// Drops what the mix has used once it is most of the buffer, so a frame costs no shift of the rest.
        func compact() {
            guard consumed >= 4 * OpusMixer.frameSamples, consumed * 2 >= pcm.count else { return }
            pcm.removeFirst(consumed)
            consumed = 0
        }

        init(timeline: RTPOpusTimeline, decoder: OpusDecoder) {
            self.timeline = timeline
            self.decoder = decoder
        }
    }

    public static var frameSamples: Int { 960 }

    public let head: OpusHead
    public let tags: OpusTags
    private let encoder: OpusEncoder
    private var ogg: OggStreamWriter
    private var inputs: [Speaker: Input] = [:]
    private let jitterWindow: Duration
    private let flushInterval: Int64
    private var samplesSinceFlush: Int64 = 0
    /// Where the mix stands on the recording's time line: samples mixed and encoded so far.
    public private(set) var position: Int64 = 0
    /// Samples whose sum left 16 bits and were held at the limit.
    public private(set) var saturatedSamples = 0
    private var wroteHeaders = false
    private var finished = false
    /// One frame's sum and samples, reused for every frame.
    private var sum = [Int32](repeating: 0, count: 960)
    private var frame = [Int16](repeating: 0, count: 960)

    public init(serialNumber: UInt32, tags: OpusTags = OpusTags(), bitsPerSecond: Int32 = 64_000,
                jitterWindow: Duration = .milliseconds(100), flushInterval: Duration = .seconds(1)) throws(OpusError) {
        encoder = try OpusEncoder(channelCount: 1, bitsPerSecond: bitsPerSecond)
        head = OpusHead(channelCount: 1, preSkip: UInt16(encoder.lookahead))
        self.tags = tags
        ogg = OggStreamWriter(serialNumber: serialNumber)
        self.jitterWindow = jitterWindow
        self.flushInterval = RTPOpusTimeline.samples(in: flushInterval)
    }

    public var speakers: [Speaker] { Array(inputs.keys) }

    /// Starts mixing `speaker` from where the mix stands. A speaker who sends without being added is added then.
    public func addSpeaker(_ speaker: Speaker) throws(OpusError) {
        guard inputs[speaker] == nil else { return }
        inputs[speaker] = Input(timeline: RTPOpusTimeline(start: position, jitterWindow: jitterWindow), decoder: try OpusDecoder(channelCount: 1))
    }

    /// Stops mixing `speaker`; what they sent and the mix has not reached yet is dropped.
    public func removeSpeaker(_ speaker: Speaker) { inputs[speaker] = nil }

    @discardableResult
    public func receive(from speaker: Speaker, sequence: UInt16, timestamp: UInt32, payload: [UInt8], arrival: Duration) throws(OpusError) -> RTPOpusTimeline.Disposition {
        try addSpeaker(speaker)
        return inputs[speaker]!.timeline.receive(sequence: sequence, timestamp: timestamp, payload: payload,
                                                 arrival: RTPOpusTimeline.samples(in: arrival))
    }

    /// Decodes what the jitter windows released, mixes and encodes every whole frame up to `now` less the window.
    public func advance(to now: Duration) throws(OpusError) -> [UInt8] {
        precondition(!finished, "advance after finish")
        var bytes = headersIfFirst()
        let samples = RTPOpusTimeline.samples(in: now)
        for input in inputs.values { decode(input.timeline.release(now: samples), into: input) }
        let horizon = samples - RTPOpusTimeline.samples(in: jitterWindow)
        while position + Int64(Self.frameSamples) <= horizon { bytes += try mixFrame(granuleLimit: nil) }
        if samplesSinceFlush >= flushInterval {
            bytes += ogg.flush()
            samplesSinceFlush = 0
        }
        return bytes
    }

    /// Mixes everything up to `end`, drains the encoder and writes the last page; the last one's granule position
    /// trims the padding of the last frame (RFC 7845 §4.5).
    public func finish(at end: Duration) throws(OpusError) -> [UInt8] {
        precondition(!finished, "finish twice")
        finished = true
        var bytes = headersIfFirst()
        let endSample = max(RTPOpusTimeline.samples(in: end), position)
        for input in inputs.values { decode(input.timeline.finish(end: endSample), into: input) }
        let lastGranule = Int64(head.preSkip) + endSample
        // The encoder holds back `lookahead` samples: frames of silence push them out.
        let target = endSample + Int64(encoder.lookahead)
        repeat { bytes += try mixFrame(granuleLimit: lastGranule) } while position < target
        bytes += ogg.flush(endOfStream: true)
        return bytes
    }

    /// The OpusHead and OpusTags pages now, which `advance` then leaves out: for a live stream, whose listeners each
    /// get them first and then the pages from where the mix stands.
    public func takeHeaderPages() -> [UInt8] { headersIfFirst() }

    private func headersIfFirst() -> [UInt8] {
        guard !wroteHeaders else { return [] }
        wroteHeaders = true
        return ogg.opusHeaderPages(head, tags)
    }

    private func decode(_ events: [RTPOpusTimeline.Event], into input: Input) {
        for event in events {
            switch event {
            case .gap(let samples):
                input.pcm += repeatElement(0, count: Int(samples))
            case .packet(let payload, let samples):
                // A packet libopus reads the TOC of but not the rest stays its length in silence: time is kept.
                let decoded = (try? input.decoder.decode(payload)) ?? []
                input.pcm += decoded.count == samples ? decoded : [Int16](repeating: 0, count: samples)
            }
        }
    }

    private func mixFrame(granuleLimit: Int64?) throws(OpusError) -> [UInt8] {
        sum.withUnsafeMutableBufferPointer { sum in
            for index in sum.indices { sum[index] = 0 }
            for input in inputs.values {
                let count = min(Self.frameSamples, input.pcm.count - input.consumed)
                input.pcm.withUnsafeBufferPointer { pcm in
                    for index in 0..<count { sum[index] &+= Int32(pcm[input.consumed + index]) }
                }
                input.consumed += count
                input.compact()
            }
        }
        var saturated = 0
        frame.withUnsafeMutableBufferPointer { frame in
            sum.withUnsafeBufferPointer { sum in
                for index in sum.indices {
                    let value = sum[index]
                    if value > Int32(Int16.max) || value < Int32(Int16.min) { saturated += 1 }
                    frame[index] = Int16(clamping: value)
                }
            }
        }
        saturatedSamples += saturated
        let packet = try encoder.encode(frame)
        position += Int64(Self.frameSamples)
        samplesSinceFlush += Int64(Self.frameSamples)
        // The decoded stream counts the encoder's delay too: the pre-skip drops it, so sample 0 is the recording's start.
        var granule = position
        if let granuleLimit { granule = min(granule, granuleLimit) }
        return ogg.append(packet: packet, granulePosition: granule)
    }
}
