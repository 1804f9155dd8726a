#if canImport(Glibc)
import Glibc
#endif
import ParlorLoop
import ParlorRecording

/// An Ogg Opus file's audio packets, read and checked whole before anything is sent: what `OggOpusPlayer` plays.
public struct OggOpusClip: Sendable {
    public struct Packet: Sendable {
        public var data: [UInt8]
        /// Where the packet starts, in 48 kHz samples from the clip's first packet (its granule position less its
        /// duration): a file with gaps (DTX) keeps them.
        public var offset: Int64
        public var samples: Int
    }

    /// The largest file read: an hour of Opus at 64 kbit/s is about 29 MiB.
    public static let maximumFileSize = 256 << 20

    public let packets: [Packet]
    public let channelCount: Int
    /// From the first packet's start to the last one's end, in 48 kHz samples.
    public let length: Int64
    /// The input ended without an end-of-stream page (its writer was stopped): the packets of its whole pages.
    public let wasTruncated: Bool

    /// Reads `path`. Throws a sentence: the file is missing or unreadable, too large, not Ogg Opus, or has no audio.
    public init(path: String) throws(MediaClientError) {
        try self.init(bytes: try readWholeFile(path, limit: Self.maximumFileSize), name: path)
    }

    public init(bytes: [UInt8], name: String) throws(MediaClientError) {
        var reader: OggOpusReader
        do { reader = try OggOpusReader(bytes: bytes) } catch {
            throw MediaClientError("\(name) is not an Ogg Opus file (\(Self.describe(error)))")
        }
        var read: [OggOpusReader.Packet] = []
        var truncated = false
        do {
            while let packet = try reader.next() { read.append(packet) }
        } catch .truncated {
            truncated = true
        } catch {
            throw MediaClientError("\(name) is not a valid Ogg Opus file (\(Self.describe(error)) after \(read.count) audio packets)")
        }
        guard let first = read.first else { throw MediaClientError("\(name) holds no audio packets") }
        let origin = first.granulePosition - Int64(first.samples)
        var packets: [Packet] = []
        packets.reserveCapacity(read.count)
        var end: Int64 = 0
        for packet in read {
            // Granule positions only grow in a valid file; one that goes back is played right after its predecessor.
            let offset = max(end, packet.granulePosition - Int64(packet.samples) - origin)
            packets.append(Packet(data: packet.data, offset: offset, samples: packet.samples))
            end = offset + Int64(packet.samples)
        }
        self.packets = packets
        channelCount = Int(reader.head.channelCount)
        length = end
        wasTruncated = truncated
    }

    static func describe(_ error: OggOpusError) -> String {
        switch error {
        case .ogg(let page): "bad Ogg page: \(page)"
        case .truncated: "it ends inside a page"
        case .notOpus: "no OpusHead on its first page"
        case .unsupportedHeader(let what): "unsupported OpusHead: \(what)"
        case .badTags: "bad OpusTags"
        case .unsupportedStream: "several logical streams (multiplexed or chained)"
        case .missingPage(let expected, let found): "page \(found) where page \(expected) belongs"
        case .badContinuation(let page): "page \(page) continues no packet"
        case .badGranulePosition(let page): "page \(page) has no granule position"
        case .badPacket(let page): "page \(page) holds a packet libopus does not read"
        case .packetTooLarge: "a packet over 1 MiB"
        case .dataAfterEndOfStream: "data after the end of the stream"
        }
    }
}

/// Plays an `OggOpusClip` as a `MediaPeer`'s microphone: each packet sent when its time comes (its offset from the
/// start, at 48 kHz, on the monotonic clock, so the pace does not drift), its RTP timestamp the same distance
/// from the first, and an RFC 6464 audio level computed from the packet decoded (libopus), so the server's speaking
/// detection hears it as it would a browser's. A late timer sends every packet that is due at once.
/// With `loops`, the clip starts again right after its end, timestamps running on; else `ended` is called once after
/// the last packet. Loop thread (the peer's).
public final class OggOpusPlayer {
    public let clip: OggOpusClip
    public let loops: Bool
    /// Called once when the last packet went out (never with `loops`).
    public var ended: (() -> Void)?
    private let peer: MediaPeer
    private let decoder: OpusDecoder?
    private var startedAt: UInt64 = 0
    private var index = 0
    /// Samples of the clips played whole before the current pass (looping).
    private var passOffset: Int64 = 0
    /// Where the next RTP timestamp stands, in samples from the first packet's.
    private var rtpPosition: Int64 = 0
    private var timer: TimerID?
    private var stopped = false
    public private(set) var packetsSent = 0

    public init(clip: OggOpusClip, peer: MediaPeer, loops: Bool) {
        self.clip = clip
        self.peer = peer
        self.loops = loops
        decoder = try? OpusDecoder(channelCount: clip.channelCount)
    }

    /// Starts playing now. Loop thread, once the peer is connected.
    public func start() {
        peer.loop.assertInLoop()
        startedAt = MonotonicClock.now()
        sendDue()
    }

    public func stop() {
        peer.loop.assertInLoop()
        stopped = true
        if let timer { peer.loop.cancelTimer(timer) }
        timer = nil
    }

    private func due(_ packet: OggOpusClip.Packet) -> UInt64 {
        startedAt + UInt64(passOffset + packet.offset) * 1_000_000_000 / UInt64(Opus.sampleRate)
    }

    private func sendDue() {
        timer = nil
        guard !stopped else { return }
        let now = MonotonicClock.now()
        while index < clip.packets.count, due(clip.packets[index]) <= now {
            send(clip.packets[index])
            index += 1
            if index == clip.packets.count, loops {
                passOffset += clip.length
                index = 0
            }
        }
        guard index < clip.packets.count else {
            stopped = true
            ended?()
            return
        }
        let next = due(clip.packets[index])
        timer = peer.loop.schedule(after: TimeSpan(nanoseconds: next > now ? next - now : 0)) { [weak self] in self?.sendDue() }
    }

    private func send(_ packet: OggOpusClip.Packet) {
        let position = passOffset + packet.offset
        if position > rtpPosition {
            peer.pauseRTP(samples: UInt32(truncatingIfNeeded: position - rtpPosition))
            rtpPosition = position
        }
        // A send that fails (the socket closed meanwhile) loses that packet, as a network would.
        try? peer.sendRTP(packet.data, level: level(of: packet.data), samples: UInt32(packet.samples))
        rtpPosition += Int64(packet.samples)
        packetsSent += 1
    }

    /// −dBov of the packet's decoded samples (RFC 6464: 0 loudest, 127 silence).
    private func level(of data: [UInt8]) -> UInt8 {
        guard let decoder, let pcm = try? decoder.decode(data), !pcm.isEmpty else { return 127 }
        var sum: Double = 0
        for sample in pcm { sum += Double(sample) * Double(sample) }
        let rms = (sum / Double(pcm.count)).squareRoot() / 32_768
        guard rms > 0 else { return 127 }
        let dBov = -20 * log10(rms)
        return UInt8(min(127, max(0, dBov.rounded())))
    }
}
