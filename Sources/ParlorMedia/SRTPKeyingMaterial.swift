/// The SRTP keys one side of a DTLS-SRTP association uses (RFC 5764 §4.2): `local` protects what it sends, `remote`
/// unprotects what the peer sends. Each is the master key followed by the master salt.
public struct SRTPKeyingMaterial: Sendable, Equatable {
    public var profile: SRTPProfile
    public var local: [UInt8]
    public var remote: [UInt8]

    /// Splits the exporter's output, laid out as client key, server key, client salt, server salt.
    init(profile: SRTPProfile, exported: [UInt8], isServer: Bool) {
        let keyLength = profile.keyLength, saltLength = profile.saltLength
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

    /// The pair of libsrtp2 sessions these keys make: one to protect, one to unprotect.
    public func makeSessions() throws(SRTPError) -> (outbound: SRTPSession, inbound: SRTPSession) {
        (try SRTPSession(profile: profile, direction: .outbound, key: local),
         try SRTPSession(profile: profile, direction: .inbound, key: remote))
    }
}
