/// What both directions of one session's SRTP hold: the profile, its packet transform keyed once for the direction
/// (`SRTPSender` protects, `SRTPReceiver` unprotects) and the per-SSRC streams; each subclass adds its direction's
/// packet operations (it is not open: no others outside ParlorSRTP). Not thread-safe: it belongs to its session's
/// thread.
public class SRTPContext {
    public final let profile: SRTPProtectionProfile
    /// Noncopyable and inline in the object: no pointer hop per packet.
    final let transform: SRTPPacketTransform
    final var streams = SRTPStreamTable()

    /// The direction the transform is keyed for (GCM's OpenSSL context encrypts or decrypts): each subclass says
    /// its own. A bare `SRTPContext` has no packet operations, only its profile and counters: keyed to unprotect.
    class var protects: Bool { false }

    /// `keyingMaterial`: the direction's master key then master salt (ours for a sender, the peer's for a receiver),
    /// `profile.keyingMaterialLength` bytes.
    public convenience init(profile: SRTPProtectionProfile, keyingMaterial: [UInt8]) throws(SRTPError) {
        try self.init(profile: profile, sessionKeys: SRTPKeyDerivation.sessionKeys(profile: profile, keyingMaterial: keyingMaterial))
    }

    /// Keyed with session keys directly, skipping the key derivation: RFC 7714's vectors give session keys.
    init(profile: SRTPProtectionProfile, sessionKeys: SRTPSessionKeys) throws(SRTPError) {
        self.profile = profile
        transform = try SRTPPacketTransform(profile: profile, sessionKeys: sessionKeys, encrypt: Self.protects)
    }

    /// The rollover counter of `ssrc`'s RTP stream (0 before its first packet).
    public final func rolloverCounter(ssrc: UInt32) -> UInt32 {
        guard let position = streams.position(of: ssrc) else { return 0 }
        return streams[position].rtpIndex?.rolloverCounter ?? 0
    }
}
