/// The identification header of an Ogg Opus stream (RFC 7845 §5.1), channel mapping family 0 (mono or stereo).
public struct OpusHead: Sendable, Equatable {
    public var channelCount: UInt8
    /// Samples at 48 kHz a player drops from the start of the decoded stream.
    public var preSkip: UInt16
    /// The input's rate before encoding, for information only: Opus always decodes at 48 kHz here.
    public var inputSampleRate: UInt32
    /// Q7.8 dB a player applies.
    public var outputGain: Int16

    public init(channelCount: UInt8 = 1, preSkip: UInt16, inputSampleRate: UInt32 = 48_000, outputGain: Int16 = 0) {
        self.channelCount = channelCount
        self.preSkip = preSkip
        self.inputSampleRate = inputSampleRate
        self.outputGain = outputGain
    }

    public func serialized() -> [UInt8] {
        var bytes = Array("OpusHead".utf8)
        bytes.append(1)  // version
        bytes.append(channelCount)
        bytes.appendLittleEndian(preSkip)
        bytes.appendLittleEndian(inputSampleRate)
        bytes.appendLittleEndian(UInt16(bitPattern: outputGain))
        bytes.append(0)  // channel mapping family 0: no mapping table
        return bytes
    }

    public init(parsing packet: [UInt8]) throws(OggOpusError) {
        guard packet.count >= 19, packet[0..<8].elementsEqual("OpusHead".utf8) else { throw .notOpus }
        // RFC 7845 §5.1: versions 0–15 share this layout; a higher major version is incompatible.
        guard packet[8] < 16 else { throw .unsupportedHeader("OpusHead version \(packet[8])") }
        guard packet[9] > 0 else { throw .unsupportedHeader("zero channels") }
        guard packet[18] == 0, packet[9] <= 2 else { throw .unsupportedHeader("channel mapping family \(packet[18]) with \(packet[9]) channels") }
        channelCount = packet[9]
        preSkip = packet.littleEndianUInt16(at: 10)
        inputSampleRate = packet.littleEndianUInt32(at: 12)
        outputGain = Int16(bitPattern: packet.littleEndianUInt16(at: 16))
    }
}

/// The comment header of an Ogg Opus stream (RFC 7845 §5.2): the encoder's vendor string and `NAME=value` comments.
public struct OpusTags: Sendable, Equatable {
    public var vendor: String
    public var comments: [String]

    public init(vendor: String = "Parlor", comments: [String] = []) {
        self.vendor = vendor
        self.comments = comments
    }

    public func serialized() -> [UInt8] {
        var bytes = Array("OpusTags".utf8)
        let vendorBytes = Array(vendor.utf8)
        bytes.appendLittleEndian(UInt32(vendorBytes.count))
        bytes += vendorBytes
        bytes.appendLittleEndian(UInt32(comments.count))
        for comment in comments {
            let commentBytes = Array(comment.utf8)
            bytes.appendLittleEndian(UInt32(commentBytes.count))
            bytes += commentBytes
        }
        return bytes
    }

    public init(parsing packet: [UInt8]) throws(OggOpusError) {
        guard packet.count >= 16, packet[0..<8].elementsEqual("OpusTags".utf8) else { throw .badTags }
        var offset = 8
        func string() throws(OggOpusError) -> String {
            guard packet.count - offset >= 4 else { throw .badTags }
            let length = Int(packet.littleEndianUInt32(at: offset))
            offset += 4
            guard packet.count - offset >= length else { throw .badTags }
            defer { offset += length }
            return String(decoding: packet[offset..<offset + length], as: UTF8.self)
        }
        vendor = try string()
        guard packet.count - offset >= 4 else { throw .badTags }
        let count = Int(packet.littleEndianUInt32(at: offset))
        offset += 4
        // Each comment takes at least its 4-byte length: a count beyond that is a lie, refused before allocating.
        guard count <= (packet.count - offset) / 4 else { throw .badTags }
        comments = []
        for _ in 0..<count { comments.append(try string()) }
    }
}

extension OggStreamWriter {
    /// RFC 7845 §3: `OpusHead` alone on the first page and `OpusTags` on the next, each page flushed, before any audio.
    mutating func opusHeaderPages(_ head: OpusHead, _ tags: OpusTags) -> [UInt8] {
        var bytes = append(packet: head.serialized(), granulePosition: 0)
        bytes += flush()
        bytes += append(packet: tags.serialized(), granulePosition: 0)
        bytes += flush()
        return bytes
    }
}
