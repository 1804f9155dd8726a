/// The sequence numbers accepted within `size` (1024) below the highest one accepted, as a bitmap (RFC 6479's
/// shape: bits kept by absolute sequence in a ring of 64-bit words, so sliding forward clears words instead of
/// shifting them). One link carries every speaker of every room two nodes share, each 50 packets a second, so
/// 1024 is a second of reordering with 20 speakers; SRTP's 128 per stream would be far too few.
///
/// The ring has 17 words: the 1024 numbers from highest - 1023 to highest touch at most 17 blocks of 64, so no two
/// of them share a bit.
struct MediaLinkReplayWindow: Equatable {
    static let size: UInt64 = 1024
    private static let wordCount: UInt64 = 17

    private(set) var highest: UInt64 = 0
    private(set) var isEmpty = true
    private var words = [UInt64](repeating: 0, count: Int(wordCount))

    /// Throws if `sequence` was accepted before or lies below the window; never changes the window.
    func check(_ sequence: UInt64) throws(MediaLinkOpenError) {
        guard !isEmpty, sequence <= highest else { return }
        guard highest - sequence < Self.size else { throw .tooOld(sequence: sequence) }
        if words[Self.word(sequence)] & Self.bit(sequence) != 0 { throw .replayed(sequence: sequence) }
    }

    /// Marks `sequence` accepted, sliding the window when it is the new highest. Call after `check` and after the
    /// packet authenticated.
    mutating func accept(_ sequence: UInt64) {
        if isEmpty || sequence > highest {
            // Blocks after the highest one's, up to the new one's, held numbers a whole ring ago: clear them.
            let oldBlock = isEmpty ? nil : highest >> 6
            let newBlock = sequence >> 6
            if let oldBlock, newBlock - oldBlock < Self.wordCount {
                var block = oldBlock + 1
                while block <= newBlock {
                    words[Int(block % Self.wordCount)] = 0
                    block += 1
                }
            } else {
                for index in words.indices { words[index] = 0 }
            }
            isEmpty = false
            highest = sequence
        } else if highest - sequence >= Self.size {
            return
        }
        words[Self.word(sequence)] |= Self.bit(sequence)
    }

    private static func word(_ sequence: UInt64) -> Int { Int((sequence >> 6) % wordCount) }
    private static func bit(_ sequence: UInt64) -> UInt64 { 1 << (sequence & 63) }
}
