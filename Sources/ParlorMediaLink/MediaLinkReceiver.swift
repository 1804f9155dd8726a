/// What one authenticated link datagram carried.
public struct MediaLinkPacket: Sendable, Equatable {
    public let room: String
    public let speaker: String
    public let rtp: [UInt8]
    public let sequence: UInt64
}

/// Opens one direction of a media link: checks the header, the replay window and the GCM tag, in that order, and
/// moves the window only for a packet that authenticated. Not thread-safe: it belongs to the thread that reads the
/// link's socket.
public final class MediaLinkReceiver {
    private let cipher: AES128GCMContext
    private let nonceSalt: [UInt8]
    public let epoch: UInt32
    private(set) var window = MediaLinkReplayWindow()

    /// The receiving half of `keys`.
    public convenience init(keys: MediaLinkKeys) throws(MediaLinkCryptoError) {
        try self.init(direction: keys.receiving, epoch: keys.remoteEpoch)
    }

    init(direction: MediaLinkDirectionKeys, epoch: UInt32) throws(MediaLinkCryptoError) {
        cipher = try AES128GCMContext(key: direction.key, encrypt: false)
        nonceSalt = direction.nonceSalt
        self.epoch = epoch
    }

    /// The room, speaker and RTP packet `datagram` carries, or why it was dropped.
    public func open(_ datagram: [UInt8]) throws(MediaLinkOpenError) -> MediaLinkPacket {
        let format = MediaLinkPacketFormat.self
        guard datagram.count >= format.minimumDatagramLength else {
            throw .malformed("\(datagram.count) bytes, shorter than the \(format.minimumDatagramLength) of the smallest packet")
        }
        guard datagram.count <= format.maximumDatagramLength else {
            throw .malformed("\(datagram.count) bytes, longer than the \(format.maximumDatagramLength) of the largest packet")
        }
        guard datagram[0] == format.version else { throw .malformed("version \(datagram[0])") }
        let packetEpoch = UInt32(datagram.readBigEndian(at: 1, count: 4))
        guard packetEpoch == epoch else { throw .wrongEpoch(expected: epoch, got: packetEpoch) }
        let sequence = datagram.readBigEndian(at: 5, count: 8)
        try window.check(sequence)

        var packet = datagram
        let bodyCount = packet.count - format.headerLength - format.tagLength
        let nonce = format.nonce(salt: nonceSalt, sequence: sequence)
        let authentic: Bool
        do throws(MediaLinkCryptoError) {
            authentic = try packet.withUnsafeMutableBufferPointer { bytes throws(MediaLinkCryptoError) in
                let base = bytes.baseAddress!
                return try cipher.open(iv: nonce, aad: base, aadCount: format.headerLength, body: base + format.headerLength,
                                       bodyCount: bodyCount, tag: base + format.headerLength + bodyCount)
            }
        } catch {
            if case .openSSL(let call) = error { throw .openSSL(call: call) }
            throw .openSSL(call: error.description)
        }
        guard authentic else { throw .forged }
        window.accept(sequence)

        let fields = try format.fields(ofBody: packet[format.headerLength..<(format.headerLength + bodyCount)])
        return MediaLinkPacket(room: fields.room, speaker: fields.speaker, rtp: fields.rtp, sequence: sequence)
    }
}
