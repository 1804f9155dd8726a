import COpus

/// libopus's encoder and decoder (Debian's libopus0), at 48 kHz, 16-bit samples.
public enum Opus {
    public static let sampleRate = 48_000
    /// libopus's largest packet for one frame (RFC 6716 §3.2.1: 1275 bytes a frame, up to 3 frames of 20 ms in 60 ms).
    static let maximumPacketSize = 4_000

    /// The samples at 48 kHz an Opus packet decodes to, read from its TOC by libopus; nil for a packet libopus refuses.
    public static func sampleCount(of packet: [UInt8]) -> Int? {
        guard !packet.isEmpty else { return nil }
        let count = packet.withUnsafeBufferPointer { opus_packet_get_nb_samples($0.baseAddress!, Int32($0.count), Int32(sampleRate)) }
        return count > 0 ? Int(count) : nil
    }
}

/// Why libopus refused.
public struct OpusError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public var description: String { String(cString: opus_strerror(code)) }
}

/// A libopus encoder, mono or stereo at 48 kHz. Not Sendable: one owner encodes at a time.
public final class OpusEncoder {
    private let encoder: OpaquePointer
    public let channelCount: Int
    /// Samples the encoder delays its output by: the pre-skip of the stream it writes (RFC 7845 §4.2).
    public let lookahead: Int

    /// `lowDelay`: CELT only (libopus's restricted low-delay mode), whose frames of silence take 3 bytes where SILK's
    /// take up to 18.
    public init(channelCount: Int = 1, bitsPerSecond: Int32 = 64_000, voice: Bool = true, lowDelay: Bool = false) throws(OpusError) {
        var error: Int32 = 0
        let application = lowDelay ? OPUS_APPLICATION_RESTRICTED_LOWDELAY : OPUS_APPLICATION_AUDIO
        guard let encoder = opus_encoder_create(Int32(Opus.sampleRate), Int32(channelCount), application, &error), error == OPUS_OK else {
            throw OpusError(code: error)
        }
        self.encoder = encoder
        self.channelCount = channelCount
        var status = parlor_opus_set_bitrate(encoder, bitsPerSecond)
        if status == OPUS_OK, voice { status = parlor_opus_set_signal_voice(encoder) }
        var lookahead: Int32 = 0
        if status == OPUS_OK { status = parlor_opus_get_lookahead(encoder, &lookahead) }
        guard status == OPUS_OK else {
            opus_encoder_destroy(encoder)
            throw OpusError(code: status)
        }
        self.lookahead = Int(lookahead)
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Encodes one frame (2.5, 5, 10, 20, 40 or 60 ms: `pcm.count / channelCount` samples), interleaved.
    public func encode(_ pcm: [Int16]) throws(OpusError) -> [UInt8] {
        var packet = [UInt8](repeating: 0, count: Opus.maximumPacketSize)
        let size = pcm.withUnsafeBufferPointer { samples in
            packet.withUnsafeMutableBufferPointer { output in
                opus_encode(encoder, samples.baseAddress!, Int32(samples.count / channelCount), output.baseAddress!, Int32(output.count))
            }
        }
        guard size > 0 else { throw OpusError(code: size) }
        packet.removeSubrange(Int(size)...)
        return packet
    }
}

/// A libopus decoder at 48 kHz. Not Sendable: one owner decodes at a time.
public final class OpusDecoder {
    private let decoder: OpaquePointer
    public let channelCount: Int

    public init(channelCount: Int = 1) throws(OpusError) {
        var error: Int32 = 0
        guard let decoder = opus_decoder_create(Int32(Opus.sampleRate), Int32(channelCount), &error), error == OPUS_OK else {
            throw OpusError(code: error)
        }
        self.decoder = decoder
        self.channelCount = channelCount
    }

    deinit { opus_decoder_destroy(decoder) }

    /// Decodes one packet to interleaved samples; `nil` asks libopus to conceal `lostSamples` of a lost packet.
    public func decode(_ packet: [UInt8]?, lostSamples: Int = 960) throws(OpusError) -> [Int16] {
        let capacity = packet.flatMap(Opus.sampleCount(of:)) ?? lostSamples
        var pcm = [Int16](repeating: 0, count: capacity * channelCount)
        let count = pcm.withUnsafeMutableBufferPointer { output in
            if let packet {
                return packet.withUnsafeBufferPointer { input in
                    opus_decode(decoder, input.baseAddress, Int32(input.count), output.baseAddress!, Int32(capacity), 0)
                }
            }
            return opus_decode(decoder, nil, 0, output.baseAddress!, Int32(capacity), 0)
        }
        guard count >= 0 else { throw OpusError(code: count) }
        pcm.removeSubrange((Int(count) * channelCount)...)
        return pcm
    }
}
