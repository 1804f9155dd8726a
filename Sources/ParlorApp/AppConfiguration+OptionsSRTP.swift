import ParlorMedia
import ParlorSRTP

extension AppConfiguration {
    /// Which SRTP profiles the media server's DTLS agrees to, and in which order. The default prefers
    /// AEAD_AES_128_GCM, the cheaper one per packet (docs/media.md); naming one profile forces it, which is how the
    /// browser tests run with each in turn.
    static let srtpOptions: [ConfigurationOption] = [
        option("--srtp-profiles", "PARLOR_SRTP_PROFILES", "AEAD_AES_128_GCM,AES_CM_128_HMAC_SHA1_80",
               "comma-separated SRTP profiles the media server agrees to in DTLS, preferred first (--media sfu); a browser offering none of them gets no media") {
            var profiles: [SRTPProtectionProfile] = []
            for name in $1.split(separator: ",").map({ $0.trimmingSpaces }).filter({ !$0.isEmpty }) {
                guard let profile = SRTPProtectionProfile(name: name) else {
                    throw ConfigurationError(message: "--srtp-profiles takes AEAD_AES_128_GCM and AES_CM_128_HMAC_SHA1_80, not \(name)")
                }
                if !profiles.contains(profile) { profiles.append(profile) }
            }
            guard !profiles.isEmpty else { throw ConfigurationError(message: "--srtp-profiles needs at least one profile") }
            $0.srtpProfiles = profiles
        },
    ]
}
