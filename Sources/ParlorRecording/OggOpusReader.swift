/// Reads an Ogg Opus stream (RFC 7845) page by page: its `OpusHead` and `OpusTags`, then its audio packets, each with
/// the granule position at its end. Every page's checksum is checked. Bad input is a typed error, never a trap; an
/// input cut off inside a page yields every packet of the whole pages before it, then `.truncated`.
///
/// One logical stream with channel mapping family 0, as Parlor writes; a multiplexed or chained file is refused.
public struct OggOpusReader: Sendable {
    public struct Packet: Sendable, Equatable {
        public var data: [UInt8]
        /// The stream's position at the packet's end: samples at 48 kHz, the pre-skip included.
        public var granulePosition: Int64
        /// The samples it decodes to (libopus reads its TOC).
        public var samples: Int
    }

    /// The largest packet accepted: more than any Opus packet (RFC 6716 §3.2.5: 120 ms of 1275-byte frames), so the
    /// reader's memory stays bounded whatever the input.
    public static let maximumPacketSize = 1 << 20

    public private(set) var head: OpusHead
    public private(set) var tags: OpusTags
    private let bytes: [UInt8]
    private var offset: Int
    private var serialNumber: UInt32
    private var nextSequenceNumber: UInt32
    private var partial: [UInt8] = []
    private var ready: [Packet] = []
    private var sawEndOfStream = false

    public init(bytes: [UInt8]) throws(OggOpusError) {
        self.bytes = bytes
        offset = 0
        serialNumber = 0
        nextSequenceNumber = 0
        // Placeholders until the header pages are read.
        head = OpusHead(preSkip: 0)
        tags = OpusTags()
        let first = try nextPage()
        guard first.flags.contains(.beginningOfStream) else { throw .notOpus }
        serialNumber = first.serialNumber
        try check(first)
        let headPackets = try packets(of: first)
        guard headPackets.count == 1, !first.lacingValues.isEmpty, first.lacingValues.last! < 255 else { throw .notOpus }
        head = try OpusHead(parsing: headPackets[0])
        // OpusTags may span pages; it must end a page, and audio starts on the next (RFC 7845 §3).
        var tagPackets: [[UInt8]] = []
        while tagPackets.isEmpty {
            let page = try nextPage()
            try check(page)
            tagPackets = try packets(of: page)
            guard tagPackets.count <= 1, tagPackets.isEmpty || page.lacingValues.last! < 255 else { throw .badTags }
        }
        tags = try OpusTags(parsing: tagPackets[0])
    }

    /// The next audio packet; nil at the end of the stream.
    public mutating func next() throws(OggOpusError) -> Packet? {
        while ready.isEmpty {
            if offset == bytes.count {
                // No end-of-stream page: the writer stopped mid-stream (killed), whether or not at a page's end.
                guard sawEndOfStream else { throw .truncated }
                return nil
            }
            guard !sawEndOfStream else { throw .dataAfterEndOfStream }
            let page = try nextPage()
            try check(page)
            let completed = try packets(of: page)
            guard !completed.isEmpty else { continue }
            // The page's granule position is the end of its last packet; earlier ones end before it by what follows.
            let durations = try completed.map { (packet) throws(OggOpusError) -> Int in
                guard let samples = Opus.sampleCount(of: packet) else { throw .badPacket(sequenceNumber: page.sequenceNumber) }
                return samples
            }
            guard page.granulePosition >= 0 else { throw .badGranulePosition(sequenceNumber: page.sequenceNumber) }
            var end = page.granulePosition
            var packets: [Packet] = []
            for (packet, samples) in zip(completed, durations).reversed() {
                packets.append(Packet(data: packet, granulePosition: end, samples: samples))
                end -= Int64(samples)
            }
            ready = packets.reversed()
        }
        return ready.removeFirst()
    }

    /// Every audio packet to the end of the stream.
    public mutating func readAll() throws(OggOpusError) -> [Packet] {
        var packets: [Packet] = []
        while let packet = try next() { packets.append(packet) }
        return packets
    }

    private mutating func nextPage() throws(OggOpusError) -> OggPage {
        guard offset < bytes.count else { throw .truncated }
        let page: OggPage
        do { page = try OggPage(parsing: bytes, at: offset) } catch { throw error == .truncated ? .truncated : .ogg(error) }
        offset += page.size
        return page
    }

    private mutating func check(_ page: OggPage) throws(OggOpusError) {
        guard page.serialNumber == serialNumber else { throw .unsupportedStream(serialNumber: page.serialNumber) }
        guard page.sequenceNumber == nextSequenceNumber else {
            throw .missingPage(expected: nextSequenceNumber, found: page.sequenceNumber)
        }
        guard nextSequenceNumber == 0 || !page.flags.contains(.beginningOfStream) else { throw .unsupportedStream(serialNumber: page.serialNumber) }
        guard page.flags.contains(.continued) == !partial.isEmpty else { throw .badContinuation(sequenceNumber: page.sequenceNumber) }
        nextSequenceNumber &+= 1
        if page.flags.contains(.endOfStream) { sawEndOfStream = true }
    }

    /// The packets that end on `page`, the first one joined to what earlier pages began.
    private mutating func packets(of page: OggPage) throws(OggOpusError) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var start = 0
        for value in page.lacingValues {
            let end = start + Int(value)
            partial += page.body[start..<end]
            guard partial.count <= Self.maximumPacketSize else { throw .packetTooLarge }
            start = end
            if value < 255 {
                packets.append(partial)
                partial = []
            }
        }
        return packets
    }
}

/// Why bytes are not an Ogg Opus stream Parlor reads.
public enum OggOpusError: Error, Sendable, Equatable {
    case ogg(OggError)
    /// The input ends inside a page, or before the end-of-stream page (a file whose writer was stopped).
    case truncated
    /// No `OpusHead` on the first page.
    case notOpus
    case unsupportedHeader(String)
    case badTags
    /// A page of another logical stream (multiplexed or chained files are not read).
    case unsupportedStream(serialNumber: UInt32)
    case missingPage(expected: UInt32, found: UInt32)
    /// A page's continued flag disagrees with whether a packet was left open.
    case badContinuation(sequenceNumber: UInt32)
    /// A page that ends packets without a granule position.
    case badGranulePosition(sequenceNumber: UInt32)
    /// libopus does not read the packet's TOC.
    case badPacket(sequenceNumber: UInt32)
    case packetTooLarge
    case dataAfterEndOfStream
}
