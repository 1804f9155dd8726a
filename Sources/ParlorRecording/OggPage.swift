/// One Ogg page (RFC 3533 §6): its header fields, lacing values and body. `serialized()` writes it with its checksum;
/// `init(parsing:at:)` reads one and checks it.
public struct OggPage: Sendable, Equatable {
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The page's first segment continues a packet begun on the page before.
        public static let continued = Flags(rawValue: 0x01)
        public static let beginningOfStream = Flags(rawValue: 0x02)
        public static let endOfStream = Flags(rawValue: 0x04)
    }

    /// "No packet ends on this page" (RFC 3533 §6: granule position -1).
    public static let noGranulePosition: Int64 = -1
    public static let headerSize = 27
    /// 255 lacing values of 255 bytes.
    public static let maximumBodySize = 255 * 255

    public var flags: Flags
    public var granulePosition: Int64
    public var serialNumber: UInt32
    public var sequenceNumber: UInt32
    public var lacingValues: [UInt8]
    public var body: [UInt8]

    public init(flags: Flags, granulePosition: Int64, serialNumber: UInt32, sequenceNumber: UInt32, lacingValues: [UInt8], body: [UInt8]) {
        self.flags = flags
        self.granulePosition = granulePosition
        self.serialNumber = serialNumber
        self.sequenceNumber = sequenceNumber
        self.lacingValues = lacingValues
        self.body = body
    }

    /// The page's bytes, checksum included.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = Array("OggS".utf8)
        bytes.reserveCapacity(Self.headerSize + lacingValues.count + body.count)
        bytes.append(0)  // stream structure version
        bytes.append(flags.rawValue)
        bytes.appendLittleEndian(UInt64(bitPattern: granulePosition))
        bytes.appendLittleEndian(serialNumber)
        bytes.appendLittleEndian(sequenceNumber)
        bytes.appendLittleEndian(UInt32(0))  // checksum, filled in below
        bytes.append(UInt8(lacingValues.count))
        bytes += lacingValues
        bytes += body
        let crc = OggCRC.checksum(bytes)
        for index in 0..<4 { bytes[22 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
        return bytes
    }

    /// Reads the page that starts at `offset` and checks its checksum; the next page starts at `offset + size`.
    public init(parsing bytes: [UInt8], at offset: Int = 0) throws(OggError) {
        let capture = bytes[offset..<min(bytes.count, offset + 4)]
        guard capture.elementsEqual("OggS".utf8.prefix(capture.count)) else { throw .notAPage(offset: offset) }
        guard bytes.count - offset >= Self.headerSize else { throw .truncated }
        guard bytes[offset + 4] == 0 else { throw .unsupportedVersion(bytes[offset + 4]) }
        let rawFlags = bytes[offset + 5]
        guard rawFlags & ~0x07 == 0 else { throw .badFlags(rawFlags) }
        flags = Flags(rawValue: rawFlags)
        granulePosition = Int64(bitPattern: bytes.littleEndianUInt64(at: offset + 6))
        serialNumber = bytes.littleEndianUInt32(at: offset + 14)
        sequenceNumber = bytes.littleEndianUInt32(at: offset + 18)
        let storedCRC = bytes.littleEndianUInt32(at: offset + 22)
        let segmentCount = Int(bytes[offset + 26])
        let lacingStart = offset + Self.headerSize
        guard bytes.count - lacingStart >= segmentCount else { throw .truncated }
        lacingValues = Array(bytes[lacingStart..<lacingStart + segmentCount])
        let bodySize = lacingValues.reduce(0) { $0 + Int($1) }
        let bodyStart = lacingStart + segmentCount
        guard bytes.count - bodyStart >= bodySize else { throw .truncated }
        body = Array(bytes[bodyStart..<bodyStart + bodySize])
        var crc = OggCRC.checksum(bytes[offset..<offset + 22])
        crc = OggCRC.checksum([0, 0, 0, 0], startingWith: crc)
        crc = OggCRC.checksum(bytes[offset + 26..<bodyStart + bodySize], startingWith: crc)
        guard crc == storedCRC else { throw .badChecksum(sequenceNumber: sequenceNumber) }
    }

    /// How many bytes the page takes in a file.
    public var size: Int { Self.headerSize + lacingValues.count + body.count }
}

/// Why bytes are not the Ogg stream Parlor reads.
public enum OggError: Error, Sendable, Equatable {
    /// The input ends inside a page (a file cut off while it was written, or a short read).
    case truncated
    /// No "OggS" capture pattern where a page should start.
    case notAPage(offset: Int)
    case unsupportedVersion(UInt8)
    case badFlags(UInt8)
    case badChecksum(sequenceNumber: UInt32)
}

extension [UInt8] {
    mutating func appendLittleEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        for index in 0..<Integer.bitWidth / 8 { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    func littleEndianUInt16(at offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }

    func littleEndianUInt32(at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(self[offset + $1]) << (8 * $1) }
    }

    func littleEndianUInt64(at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(self[offset + $1]) << (8 * $1) }
    }
}
