import ParlorLoop
import Testing
@testable import ParlorMedia

/// RFC 8122 §5 lets an SDP list one `a=fingerprint` per hash function (aiortc lists sha-256, sha-384 and sha-512):
/// all are kept, the strongest one the DTLS handshake can check is used, and the handshake checks it.
@Suite struct SeveralFingerprintsTests {
    static let certificate = try! DTLSCertificate(commonName: "aiortc")

    static func lines(_ algorithms: [String]) -> [String] {
        algorithms.map { "a=fingerprint:" + certificate.fingerprint(algorithm: $0)!.sdpValue }
    }

    /// Chromium's offer with its one fingerprint line replaced by `fingerprintLines`.
    static func offer(_ fingerprintLines: [String]) -> String {
        ChromiumOffer.text.split(separator: "\r\n").flatMap { line in
            line.hasPrefix("a=fingerprint:") ? fingerprintLines : [String(line)]
        }.joined(separator: "\r\n") + "\r\n"
    }

    static let orders: [[String]] = [
        ["sha-256", "sha-384", "sha-512"], ["sha-256", "sha-512", "sha-384"], ["sha-384", "sha-256", "sha-512"],
        ["sha-384", "sha-512", "sha-256"], ["sha-512", "sha-256", "sha-384"], ["sha-512", "sha-384", "sha-256"],
    ]

    @Test(arguments: orders)
    func allThreeAreKeptAndTheStrongestIsUsed(order: [String]) throws {
        let offer = try SessionDescription(parsing: Self.offer(Self.lines(order)))
        #expect(offer.remoteFingerprints.map(\.algorithm) == order)
        #expect(offer.remoteFingerprint == Self.certificate.fingerprint(algorithm: "sha-512"))
        #expect(offer.remoteFingerprint?.digest.count == 64)
    }

    @Test(arguments: orders)
    func theServerAnswersSuchAnOffer(order: [String]) throws {
        let server = try MediaServerAnswerTests.server()
        defer { server.stop() }
        let (_, setup) = try server.answer(offer: Self.offer(Self.lines(order)), session: 1, group: "g", member: "m", maySend: true)
        #expect(setup.remoteFingerprint == Self.certificate.fingerprint(algorithm: "sha-512"))
    }

    @Test func hashFunctionsWeCannotCheckAreSkippedAndAloneRefused() throws {
        let sha1 = "a=fingerprint:sha-1 " + Array(repeating: "AB", count: 20).joined(separator: ":")
        let offer = try SessionDescription(parsing: Self.offer([sha1] + Self.lines(["sha-384"])))
        #expect(offer.remoteFingerprints.count == 2)
        #expect(offer.remoteFingerprint?.algorithm == "sha-384")
        // A digest of the wrong length for its hash function is never chosen.
        let short = "a=fingerprint:sha-512 " + Array(repeating: "AB", count: 32).joined(separator: ":")
        #expect(try SessionDescription(parsing: Self.offer([short] + Self.lines(["sha-256"]))).remoteFingerprint?.algorithm == "sha-256")
        let server = try MediaServerAnswerTests.server()
        defer { server.stop() }
        #expect(throws: SDPError.missing("a sha-256, sha-384 or sha-512 a=fingerprint")) {
            try server.answer(offer: Self.offer([sha1]), session: 1, group: "g", member: "m", maySend: true)
        }
    }

    /// The handshake computes the peer's digest under the signalled hash function.
    @Test(arguments: ["sha-256", "sha-384", "sha-512"])
    func theHandshakeChecksEachHashFunction(algorithm: String) throws {
        let serverCertificate = try DTLSCertificate()
        let server = try DTLSTransport(context: DTLSContext(role: .server, certificate: serverCertificate),
                                       expectedRemoteFingerprint: Self.certificate.fingerprint(algorithm: algorithm))
        let client = try DTLSTransport(context: DTLSContext(role: .client, certificate: Self.certificate),
                                       expectedRemoteFingerprint: serverCertificate.fingerprint)
        try Self.handshake(server, client)
        #expect(server.isConnected && client.isConnected)
        #expect(server.remoteFingerprint(algorithm: algorithm) == Self.certificate.fingerprint(algorithm: algorithm))
    }

    @Test(arguments: ["sha-384", "sha-512"])
    func aWrongStrongFingerprintFailsTheHandshake(algorithm: String) throws {
        let impostor = try DTLSCertificate(commonName: "impostor")
        let server = try DTLSTransport(context: DTLSContext(role: .server, certificate: DTLSCertificate()),
                                       expectedRemoteFingerprint: impostor.fingerprint(algorithm: algorithm))
        let client = try DTLSTransport(context: DTLSContext(role: .client, certificate: Self.certificate), expectedRemoteFingerprint: nil)
        #expect(throws: DTLSError.fingerprintMismatch) { try Self.handshake(server, client) }
        #expect(!server.isConnected)
    }

    static func handshake(_ server: DTLSTransport, _ client: DTLSTransport) throws {
        var toServer = try client.start(now: 0)
        var rounds = 0
        while !toServer.isEmpty, rounds < 20 {
            var toClient: [[UInt8]] = []
            for datagram in toServer { toClient += try server.handle(datagram, now: 0) }
            toServer = []
            for datagram in toClient { toServer += try client.handle(datagram, now: 0) }
            rounds += 1
        }
    }
}
