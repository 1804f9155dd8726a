/// Packets into the pages of one logical Ogg stream (RFC 3533): lacing (a packet of n bytes is n / 255 values of
/// 255 and one of n % 255, so a packet of exactly 255 bytes ends with a 0), packets spanning pages, page sequence
/// numbers, granule positions, and the beginning- and end-of-stream flags.
///
/// Packets wait until a page fills (255 lacing values) or the owner flushes: the owner decides the cadence.
public struct OggStreamWriter: Sendable {
    public let serialNumber: UInt32
    private var nextSequenceNumber: UInt32 = 0
    /// Lacing values and body of what has not gone into a page yet, with where each packet ends.
    private var lacing: [UInt8] = []
    private var body: [UInt8] = []
    /// (index in `lacing` of a packet's last value, its granule position), oldest first.
    private var packetEnds: [(lacingIndex: Int, granulePosition: Int64)] = []
    /// The pending lacing begins inside a packet started on a page already written.
    private var pendingIsContinued = false
    public private(set) var endedStream = false

    public init(serialNumber: UInt32) { self.serialNumber = serialNumber }

    /// Whether packets wait for a page.
    public var hasPendingPackets: Bool { !lacing.isEmpty }
    public var pagesWritten: UInt32 { nextSequenceNumber }

    /// Adds one packet; `granulePosition` is the stream's position after it. Returns the pages that filled.
    public mutating func append(packet: [UInt8], granulePosition: Int64) -> [UInt8] {
        precondition(!endedStream, "packet after the end of the stream")
        var remaining = packet.count
        repeat {
            let value = Swift.min(remaining, 255)
            lacing.append(UInt8(value))
            remaining -= value
            if value < 255 { break }
        } while true
        body += packet
        packetEnds.append((lacing.count - 1, granulePosition))
        var pages: [UInt8] = []
        while lacing.count >= 255 { pages += takePage(lacingCount: 255, endOfStream: false) }
        return pages
    }

    /// Writes everything pending as pages; with `endOfStream`, the last one carries the flag (and nothing may follow).
    /// The flag rides on a page with a packet: with nothing pending, nothing is written, so keep the last packet
    /// pending until the end (as `OpusTrackWriter.finish` does).
    public mutating func flush(endOfStream: Bool = false) -> [UInt8] {
        var pages: [UInt8] = []
        while !lacing.isEmpty {
            let count = Swift.min(lacing.count, 255)
            pages += takePage(lacingCount: count, endOfStream: endOfStream && count == lacing.count)
        }
        if endOfStream { endedStream = true }
        return pages
    }

    private mutating func takePage(lacingCount: Int, endOfStream: Bool) -> [UInt8] {
        let bodySize = lacing[0..<lacingCount].reduce(0) { $0 + Int($1) }
        var granule = OggPage.noGranulePosition
        while let first = packetEnds.first, first.lacingIndex < lacingCount {
            granule = first.granulePosition
            packetEnds.removeFirst()
        }
        for index in packetEnds.indices { packetEnds[index].lacingIndex -= lacingCount }
        var flags: OggPage.Flags = []
        if pendingIsContinued { flags.insert(.continued) }
        if nextSequenceNumber == 0 { flags.insert(.beginningOfStream) }
        if endOfStream { flags.insert(.endOfStream) }
        let page = OggPage(flags: flags, granulePosition: granule, serialNumber: serialNumber, sequenceNumber: nextSequenceNumber,
                           lacingValues: Array(lacing[0..<lacingCount]), body: Array(body[0..<bodySize]))
        // A page that ends on a value of 255 leaves its packet open: the next page continues it.
        pendingIsContinued = lacing[lacingCount - 1] == 255
        lacing.removeFirst(lacingCount)
        body.removeFirst(bodySize)
        nextSequenceNumber &+= 1
        return page.serialized()
    }
}
