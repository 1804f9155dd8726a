/// Seals one direction of a media link: each call takes the next sequence number, never one used before, so no
/// (key, nonce) pair repeats. Not thread-safe: it belongs to the thread that sends on the link.
public final class MediaLinkSender {
    private let cipher: AES128GCMContext
    private let nonceSalt: [UInt8]
    public let epoch: UInt32
    /// The sequence number the next packet gets.
    public private(set) var nextSequence: UInt64
    private var exhausted = false

    /// The sending half of `keys`.
    public convenience init(keys: MediaLinkKeys) throws(MediaLinkCryptoError) {
        try self.init(direction: keys.sending, epoch: keys.localEpoch)
    }

    /// `firstSequence` is for tests that start near the end of the sequence space.
    init(direction: MediaLinkDirectionKeys, epoch: UInt32, firstSequence: UInt64 = 0) throws(MediaLinkCryptoError) {
        cipher = try AES128GCMContext(key: direction.key, encrypt: true)
        nonceSalt = direction.nonceSalt
        self.epoch = epoch
        nextSequence = firstSequence
    }

    /// One datagram carrying `rtp` for `speaker` in `room` (limits in `MediaLinkPacketFormat`).
    public func seal(room: String, speaker: String, rtp: [UInt8]) throws(MediaLinkSealError) -> [UInt8] {
        var body = try MediaLinkPacketFormat.body(room: room, speaker: speaker, rtp: rtp)
        guard !exhausted else { throw .sequenceExhausted }
        // Taken before encrypting: even a packet that fails half-way never leaves its nonce for another.
        let sequence = nextSequence
        if sequence == .max { exhausted = true } else { nextSequence = sequence + 1 }

        let header = MediaLinkPacketFormat.header(epoch: epoch, sequence: sequence)
        let nonce = MediaLinkPacketFormat.nonce(salt: nonceSalt, sequence: sequence)
        let bodyCount = body.count
        body += [UInt8](repeating: 0, count: MediaLinkPacketFormat.tagLength)
        do throws(MediaLinkCryptoError) {
            try header.withUnsafeBufferPointer { header throws(MediaLinkCryptoError) in
                try body.withUnsafeMutableBufferPointer { body throws(MediaLinkCryptoError) in
                    try cipher.seal(iv: nonce, aad: header.baseAddress!, aadCount: header.count, body: body.baseAddress!, bodyCount: bodyCount,
                                    tag: body.baseAddress! + bodyCount)
                }
            }
        } catch {
            if case .openSSL(let call) = error { throw .openSSL(call: call) }
            throw .openSSL(call: error.description)
        }
        return header + body
    }
}
