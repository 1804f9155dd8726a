/// The profile's transform, picked once per context; a switch per packet rather than an existential. Noncopyable,
/// like the transforms it holds, so that it lies inline in its sender or receiver: no pointer hop per packet.
enum SRTPPacketTransform: ~Copyable {
    case counterMode(CounterModeTransform)
    case gcm(GCMTransform)

    init(profile: SRTPProtectionProfile, sessionKeys keys: SRTPSessionKeys, encrypt: Bool) throws(SRTPError) {
        switch profile {
        case .aes128CMHMACSHA1_80: self = .counterMode(try CounterModeTransform(keys: keys))
        case .aeadAES128GCM: self = .gcm(try GCMTransform(keys: keys, encrypt: encrypt))
        }
    }

    /// Runs `body` on `packet` in place with `growth` zero bytes appended for what it adds (a tag, SRTCP's E-flag and
    /// index), then trims the packet to the length `body` returns. On an error the appended bytes are removed again.
    @inline(__always)
    static func inPlace(_ packet: inout [UInt8], growth: Int,
                        _ body: (UnsafeMutableRawBufferPointer, _ length: Int) throws(SRTPError) -> Int) throws(SRTPError) {
        let length = packet.count
        for _ in 0..<growth { packet.append(0) }
        // The standard library's `withUnsafeMutableBytes` does not carry typed throws: the error goes through `Result`.
        let result: Result<Int, SRTPError> = packet.withUnsafeMutableBytes { bytes in
            Result { () throws(SRTPError) in try body(bytes, length) }
        }
        switch result {
        case .success(let newLength): packet.removeLast(packet.count - newLength)
        case .failure(let error):
            packet.removeLast(growth)
            throw error
        }
    }

    // The dispatch of each packet to the profile's transform.

    func protectRTP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int {
        switch self {
        case .counterMode(let transform): try transform.protectRTP(packet, length: length, headerLength: headerLength, ssrc: ssrc, index: index)
        case .gcm(let transform): try transform.protectRTP(packet, length: length, headerLength: headerLength, ssrc: ssrc, index: index)
        }
    }

    func unprotectRTP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, headerLength: Int, ssrc: UInt32, index: UInt64) throws(SRTPError) -> Int {
        switch self {
        case .counterMode(let transform): try transform.unprotectRTP(packet, length: length, headerLength: headerLength, ssrc: ssrc, index: index)
        case .gcm(let transform): try transform.unprotectRTP(packet, length: length, headerLength: headerLength, ssrc: ssrc, index: index)
        }
    }

    func protectRTCP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, ssrc: UInt32, index: UInt32) throws(SRTPError) -> Int {
        switch self {
        case .counterMode(let transform): try transform.protectRTCP(packet, length: length, ssrc: ssrc, index: index)
        case .gcm(let transform): try transform.protectRTCP(packet, length: length, ssrc: ssrc, index: index)
        }
    }

    func unprotectRTCP(_ packet: UnsafeMutablePointer<UInt8>, length: Int, ssrc: UInt32, index: UInt32, encrypted: Bool) throws(SRTPError) -> Int {
        switch self {
        case .counterMode(let transform): try transform.unprotectRTCP(packet, length: length, ssrc: ssrc, index: index, encrypted: encrypted)
        case .gcm(let transform): try transform.unprotectRTCP(packet, length: length, ssrc: ssrc, index: index, encrypted: encrypted)
        }
    }
}
