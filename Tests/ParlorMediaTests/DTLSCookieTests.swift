import Testing
@testable import ParlorMedia

/// Issue 34 item 3: a ClientHello to a session whose DTLS had not started was answered with the whole server flight
/// and its retransmissions (206 B in, 3,768 B out). Now the server role answers a first ClientHello with a
/// HelloVerifyRequest only, its cookie bound to the source address.
@Suite struct DTLSCookieTests {
    static let here = TransportAddress(host: "127.0.0.1", port: 40000)!
    static let elsewhere = TransportAddress(host: "127.0.0.1", port: 40002)!

    static func pair() throws -> (server: DTLSTransport, client: DTLSTransport) {
        let serverCertificate = try DTLSCertificate(), clientCertificate = try DTLSCertificate(commonName: "browser")
        let server = try DTLSTransport(context: DTLSContext(role: .server, certificate: serverCertificate),
                                       expectedRemoteFingerprint: clientCertificate.fingerprint)
        let client = try DTLSTransport(context: DTLSContext(role: .client, certificate: clientCertificate),
                                       expectedRemoteFingerprint: serverCertificate.fingerprint)
        return (server, client)
    }

    @Test func aFirstClientHelloGetsOnlyASmallHelloVerifyRequest() throws {
        let (server, client) = try Self.pair()
        let hello = try client.start(now: 0)
        let replies = try hello.flatMap { try server.handle($0, from: Self.here, now: 0) }
        #expect(replies.count == 1)
        let verify = try #require(replies.first)
        #expect(verify[0] == 22 && verify[13] == 3, "a handshake record holding a HelloVerifyRequest")
        #expect(verify.count < hello.map(\.count).reduce(0, +))
        #expect(server.retransmissionDeadline == nil, "nothing to retransmit: the server keeps no flight")
        // The client returns the cookie from the same address: the handshake goes on and completes.
        var toServer = try replies.flatMap { try client.handle($0, now: 0) }
        var rounds = 0
        while !toServer.isEmpty, rounds < 10 {
            let toClient = try toServer.flatMap { try server.handle($0, from: Self.here, now: 0) }
            toServer = try toClient.flatMap { try client.handle($0, now: 0) }
            rounds += 1
        }
        #expect(server.isConnected && client.isConnected)
    }

    @Test func aCookieMadeForAnotherAddressIsRefused() throws {
        let (server, client) = try Self.pair()
        let verify = try client.start(now: 0).flatMap { try server.handle($0, from: Self.here, now: 0) }
        let withCookie = try verify.flatMap { try client.handle($0, now: 0) }
        #expect(!withCookie.isEmpty)
        #expect(throws: DTLSError.self) {
            for datagram in withCookie { _ = try server.handle(datagram, from: Self.elsewhere, now: 0) }
        }
        #expect(!server.isConnected)
    }
}
