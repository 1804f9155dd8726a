/// The profile's transform, picked once per context; a switch per packet rather than an existential. Noncopyable,
/// like the transforms it holds, so that it lies inline in its sender or receiver: no pointer hop per packet.
enum SRTPPacketTransform: ~Copyable {
    case counterMode(CounterModeTransform)
    case gcm(GCMTransform)

    init(profile: SRTPProtectionProfile, keyingMaterial: [UInt8], encrypt: Bool) throws(SRTPError) {
        try self.init(profile: profile, sessionKeys: try SRTPKeyDerivation.sessionKeys(profile: profile, keyingMaterial: keyingMaterial),
                      encrypt: encrypt)
    }

    init(profile: SRTPProtectionProfile, sessionKeys keys: SRTPSessionKeys, encrypt: Bool) throws(SRTPError) {
        switch profile {
        case .aes128CMHMACSHA1_80: self = .counterMode(try CounterModeTransform(keys: keys))
        case .aeadAES128GCM: self = .gcm(try GCMTransform(keys: keys, encrypt: encrypt))
        }
    }

    /// Runs `body` on the raw bytes of `packet` and reports its typed error through `Result` (the standard library's
    /// `withUnsafeMutableBytes` does not carry typed throws).
    @inline(__always)
    static func withBytes(_ packet: inout [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws(SRTPError) -> Int) throws(SRTPError) -> Int {
        let result: Result<Int, SRTPError> = packet.withUnsafeMutableBytes { bytes in Result { () throws(SRTPError) in try body(bytes) } }
        return try result.get()
    }
}
