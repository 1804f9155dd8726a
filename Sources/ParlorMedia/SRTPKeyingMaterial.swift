import ParlorSRTP

/// The SRTP keys one side of a DTLS-SRTP association uses (RFC 5764 §4.2): `local` protects what it sends, `remote`
/// unprotects what the peer sends. Each is the master key followed by the master salt.
public struct SRTPKeyingMaterial: Sendable, Equatable {
    public var profile: SRTPProtectionProfile
    public var local: [UInt8]
    public var remote: [UInt8]

    /// Splits the exporter's output, laid out as client key, server key, client salt, server salt.
    init(profile: SRTPProtectionProfile, exported: [UInt8], isServer: Bool) {
        let keyLength = profile.masterKeyLength, saltLength = profile.masterSaltLength
        precondition(exported.count == 2 * (keyLength + saltLength))
        let clientKey = exported[0..<keyLength]
        let serverKey = exported[keyLength..<(2 * keyLength)]
        let clientSalt = exported[(2 * keyLength)..<(2 * keyLength + saltLength)]
        let serverSalt = exported[(2 * keyLength + saltLength)...]
        let client = Array(clientKey + clientSalt), server = Array(serverKey + serverSalt)
        self.profile = profile
        self.local = isServer ? server : client
        self.remote = isServer ? client : server
    }

    /// The ParlorSRTP contexts these keys make, once per session: one protects what we send, one unprotects what
    /// the peer sends.
    public func makeContexts() throws(SRTPError) -> (sender: SRTPSender, receiver: SRTPReceiver) {
        (try SRTPSender(profile: profile, keyingMaterial: local), try SRTPReceiver(profile: profile, keyingMaterial: remote))
    }
}
