/// A media link datagram (version 1; integers big-endian):
///
/// | offset | size | field |
/// | --- | --- | --- |
/// | 0 | 1 | version, 1 |
/// | 1 | 4 | link epoch: the sender's offer's (UInt32) |
/// | 5 | 8 | sequence number, per direction, from 0 (UInt64) |
/// | 13 | b | the body, AES-128-GCM ciphertext |
/// | 13+b | 16 | GCM tag |
///
/// The 13-byte header is the GCM associated data, and the 12-byte nonce is the direction's nonce salt XOR the
/// sequence number (in the last 8 bytes). The body, in clear:
///
/// | size | field |
/// | --- | --- |
/// | 1 | r, the room id's length, 1…64 |
/// | r | room id, UTF-8 |
/// | 1 | s, the speaker id's length, 1…64 |
/// | s | speaker id, UTF-8 |
/// | 2 | p, the RTP packet's length, 12…1280 |
/// | p | the RTP packet as the speaker's node decrypted it |
///
/// and nothing after. With every field at its limit a datagram is 1,441 bytes, under the 1,472 of a UDP payload on
/// a 1,500-byte IPv4 MTU, so a link packet is never fragmented.
public enum MediaLinkPacketFormat {
    public static let version: UInt8 = 1
    public static let headerLength = 13
    public static let tagLength = AES128GCMContext.tagLength
    public static let roomIDLengths = 1...64
    public static let speakerIDLengths = 1...64
    /// An RTP header is 12 bytes; 1,280 is IPv6's minimum MTU, more than any Opus packet a browser sends.
    public static let rtpLengths = 12...1280
    public static let minimumBodyLength = 1 + roomIDLengths.lowerBound + 1 + speakerIDLengths.lowerBound + 2 + rtpLengths.lowerBound
    public static let maximumBodyLength = 1 + roomIDLengths.upperBound + 1 + speakerIDLengths.upperBound + 2 + rtpLengths.upperBound
    public static let minimumDatagramLength = headerLength + minimumBodyLength + tagLength
    public static let maximumDatagramLength = headerLength + maximumBodyLength + tagLength

    static func header(epoch: UInt32, sequence: UInt64) -> [UInt8] {
        var header: [UInt8] = [version]
        header.reserveCapacity(headerLength)
        header.appendBigEndian(UInt64(epoch), count: 4)
        header.appendBigEndian(sequence, count: 8)
        return header
    }

    static func nonce(salt: [UInt8], sequence: UInt64) -> [UInt8] {
        var nonce = salt
        for index in 0..<8 { nonce[4 + index] ^= UInt8(truncatingIfNeeded: sequence >> UInt64(56 - 8 * index)) }
        return nonce
    }

    /// The body in clear, or which field is out of its limits.
    static func body(room: String, speaker: String, rtp: [UInt8]) throws(MediaLinkSealError) -> [UInt8] {
        let roomCount = room.utf8.count, speakerCount = speaker.utf8.count
        guard roomIDLengths.contains(roomCount) else { throw .fieldOutOfLimits(field: "room id", length: roomCount, allowed: roomIDLengths) }
        guard speakerIDLengths.contains(speakerCount) else {
            throw .fieldOutOfLimits(field: "speaker id", length: speakerCount, allowed: speakerIDLengths)
        }
        guard rtpLengths.contains(rtp.count) else { throw .fieldOutOfLimits(field: "RTP packet", length: rtp.count, allowed: rtpLengths) }
        var body: [UInt8] = []
        body.reserveCapacity(4 + roomCount + speakerCount + rtp.count + tagLength)
        body.append(UInt8(roomCount))
        body += room.utf8
        body.append(UInt8(speakerCount))
        body += speaker.utf8
        body.appendBigEndian(UInt64(rtp.count), count: 2)
        body += rtp
        return body
    }

    /// The fields of a decrypted body; `.malformed` unless they fill it exactly and keep to their limits.
    static func fields(ofBody body: ArraySlice<UInt8>) throws(MediaLinkOpenError) -> (room: String, speaker: String, rtp: [UInt8]) {
        var reader = BodyReader(bytes: body)
        let room = try reader.string(lengths: roomIDLengths, field: "room id")
        let speaker = try reader.string(lengths: speakerIDLengths, field: "speaker id")
        guard let high = reader.byte(), let low = reader.byte() else { throw .malformed("body ends before the RTP length") }
        let rtpLength = Int(high) << 8 | Int(low)
        guard rtpLengths.contains(rtpLength) else { throw .malformed("RTP packet length \(rtpLength) out of limits") }
        guard let rtp = reader.bytes(rtpLength) else { throw .malformed("body ends inside the RTP packet") }
        guard reader.isAtEnd else { throw .malformed("bytes after the RTP packet") }
        return (room, speaker, Array(rtp))
    }

    private struct BodyReader {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func byte() -> UInt8? { bytes.popFirst() }

        mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
            guard bytes.count >= count else { return nil }
            defer { bytes = bytes.dropFirst(count) }
            return bytes.prefix(count)
        }

        mutating func string(lengths: ClosedRange<Int>, field: String) throws(MediaLinkOpenError) -> String {
            guard let length = byte() else { throw .malformed("body ends before the \(field)") }
            guard lengths.contains(Int(length)) else { throw .malformed("\(field) length \(length) out of limits") }
            guard let raw = bytes(Int(length)) else { throw .malformed("body ends inside the \(field)") }
            guard let text = String(validating: raw, as: UTF8.self) else { throw .malformed("\(field) is not UTF-8") }
            return text
        }
    }
}
