/// Opus packets of digital silence, 20, 10, 5 and 2.5 ms long, encoded once by libopus: what fills a track where its
/// speaker sent nothing (loss, DTX, mute), so the track keeps the recording's time.
enum OpusSilence {
    /// Largest first.
    static let frames: [(samples: Int, packet: [UInt8])] = [960, 480, 240, 120].map { samples in
        do {
            let encoder = try OpusEncoder(channelCount: 1, bitsPerSecond: 16_000, voice: false, lowDelay: true)
            var packet: [UInt8] = []
            // The first frames carry the encoder's start-up; from the third on a silent frame is a silent frame.
            for _ in 0..<3 { packet = try encoder.encode([Int16](repeating: 0, count: samples)) }
            return (samples, packet)
        } catch {
            fatalError("libopus refused to encode silence: \(error)")
        }
    }

    /// The smallest frame: shorter gaps are carried over to the next one.
    static let shortestFrame = 120

    /// Silence frames covering `samples` (less a remainder under 2.5 ms, returned).
    static func packets(covering samples: Int64) -> (packets: [(samples: Int, packet: [UInt8])], remainder: Int64) {
        var left = samples
        var packets: [(samples: Int, packet: [UInt8])] = []
        for frame in frames {
            while left >= Int64(frame.samples) {
                packets.append(frame)
                left -= Int64(frame.samples)
            }
        }
        return (packets, left)
    }
}
