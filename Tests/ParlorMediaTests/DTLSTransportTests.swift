#if canImport(Glibc)
import Glibc
#endif
import ParlorLoop
import ParlorSRTP
import Testing
@testable import ParlorMedia

/// `DTLSTransport`: full in-process handshakes between the server role and an OpenSSL DTLS client (both on memory
/// BIOs, datagrams passed by hand), key export, and SRTP keyed from it.
@Suite struct DTLSTransportTests {
    struct Pair {
        let server: DTLSTransport
        let client: DTLSTransport
        let serverCertificate: DTLSCertificate
        let clientCertificate: DTLSCertificate

        init(serverProfiles: [SRTPProtectionProfile] = SRTPProtectionProfile.preferenceOrder,
             clientProfiles: [SRTPProtectionProfile] = [.aeadAES128GCM, .aes128CMHMACSHA1_80], clientExpects: DTLSFingerprint? = nil) throws {
            serverCertificate = try DTLSCertificate()
            clientCertificate = try DTLSCertificate(commonName: "browser")
            server = try DTLSTransport(context: DTLSContext(role: .server, certificate: serverCertificate, profiles: serverProfiles),
                                       expectedRemoteFingerprint: clientCertificate.fingerprint)
            client = try DTLSTransport(context: DTLSContext(role: .client, certificate: clientCertificate, profiles: clientProfiles),
                                       expectedRemoteFingerprint: clientExpects ?? serverCertificate.fingerprint)
        }

        /// Passes datagrams both ways until neither side has anything to send; returns how many flights went.
        @discardableResult
        func runHandshake(dropFirstServerFlight: Bool = false) throws -> Int {
            var now = MonotonicClock.now()
            var toServer = try client.start(now: now)
            var flights = 1
            var dropped = !dropFirstServerFlight
            while !toServer.isEmpty, flights < 20 {
                var toClient: [[UInt8]] = []
                for datagram in toServer { toClient += try server.handle(datagram, now: now) }
                if !dropped, !toClient.isEmpty {
                    // Lost on the way: the client's retransmission timer (100 ms, kept by OpenSSL on the real
                    // clock, so the test waits it out) brings the flight again.
                    dropped = true
                    let deadline = try #require(client.retransmissionDeadline)
                    #expect(client.handleTimeout(now: now).isEmpty)  // not yet
                    while MonotonicClock.now() < deadline + 2_000_000 { usleep(5_000) }
                    now = MonotonicClock.now()
                    toServer = client.handleTimeout(now: now)
                    #expect(!toServer.isEmpty)
                    flights += 1
                    continue
                }
                toServer = []
                for datagram in toClient { toServer += try client.handle(datagram, now: now) }
                flights += 1
            }
            return flights
        }
    }

    @Test func handshakeCompletesAndBothSidesExportTheSameKeys() throws {
        let pair = try Pair()
        #expect(pair.server.retransmissionDeadline == nil)
        try pair.runHandshake()
        #expect(pair.server.isConnected && pair.client.isConnected)
        #expect(pair.server.remoteFingerprint == pair.clientCertificate.fingerprint)
        #expect(pair.client.remoteFingerprint == pair.serverCertificate.fingerprint)
        let serverKeys = try pair.server.keyingMaterial()
        let clientKeys = try pair.client.keyingMaterial()
        #expect(serverKeys.profile == .aeadAES128GCM)
        #expect(serverKeys.local == clientKeys.remote)
        #expect(serverKeys.remote == clientKeys.local)
        #expect(serverKeys.local != serverKeys.remote)
        #expect(serverKeys.local.count == 28)
    }

    @Test(arguments: [SRTPProtectionProfile.aeadAES128GCM, .aes128CMHMACSHA1_80])
    func srtpKeyedFromTheHandshakeWorksBothWays(profile: SRTPProtectionProfile) throws {
        let pair = try Pair(serverProfiles: [profile])
        try pair.runHandshake()
        let server = try pair.server.keyingMaterial().makeContexts()
        let client = try pair.client.keyingMaterial().makeContexts()
        #expect(server.sender.profile == profile)
        let plain = SRTPContextTests.rtpPacket(sequence: 1000)
        var packet = plain
        try client.sender.protectRTP(&packet)
        try server.receiver.unprotectRTP(&packet)
        #expect(packet == plain)
        var back = plain
        try server.sender.protectRTP(&back)
        try client.receiver.unprotectRTP(&back)
        #expect(back == plain)
    }

    /// The server's order decides (OpenSSL picks its first profile the client offers): a client that lists counter
    /// mode first still gets GCM from our default, and counter mode when the server is told only that.
    @Test func theServersPreferenceWinsOverTheClientsOrder() throws {
        let preferring = try Pair(clientProfiles: [.aes128CMHMACSHA1_80, .aeadAES128GCM])
        try preferring.runHandshake()
        #expect(try preferring.server.keyingMaterial().profile == .aeadAES128GCM)
        #expect(try preferring.client.keyingMaterial().profile == .aeadAES128GCM)
        let forced = try Pair(serverProfiles: [.aes128CMHMACSHA1_80])
        try forced.runHandshake()
        #expect(try forced.client.keyingMaterial().profile == .aes128CMHMACSHA1_80)
    }

    @Test func aLostFlightIsRetransmittedWhenTheTimerRunsOut() throws {
        let pair = try Pair()
        try pair.runHandshake(dropFirstServerFlight: true)
        #expect(pair.server.isConnected && pair.client.isConnected)
        #expect(try pair.server.keyingMaterial().local == pair.client.keyingMaterial().remote)
    }

    @Test func aCertificateThatIsNotTheSignalledOneFailsTheHandshake() throws {
        let other = try DTLSCertificate(commonName: "impostor")
        let pair = try Pair(clientExpects: other.fingerprint)
        #expect(throws: DTLSError.fingerprintMismatch) { try pair.runHandshake() }
        #expect(!pair.client.isConnected)
        #expect(throws: DTLSError.notConnected) { try pair.client.keyingMaterial() }
    }

    @Test func datagramsStayWithinTheMTU() throws {
        let pair = try Pair()
        var toServer = try pair.client.start(now: 0)
        var sizes: [Int] = toServer.map(\.count)
        while !toServer.isEmpty {
            var toClient: [[UInt8]] = []
            for datagram in toServer { toClient += try pair.server.handle(datagram, now: 0) }
            sizes += toClient.map(\.count)
            toServer = []
            for datagram in toClient { toServer += try pair.client.handle(datagram, now: 0) }
            sizes += toServer.map(\.count)
        }
        #expect(pair.server.isConnected)
        #expect(sizes.allSatisfy { $0 <= 1200 })
        #expect(sizes.allSatisfy { MediaPacketKind(firstByte: UInt8(truncatingIfNeeded: $0 > 0 ? 22 : 0)) == .dtls })
    }

    @Test func closeNotifyEndsTheAssociation() throws {
        let pair = try Pair()
        try pair.runHandshake()
        let alert = pair.client.close()
        #expect(!alert.isEmpty)
        #expect(throws: DTLSError.closed) {
            for datagram in alert { _ = try pair.server.handle(datagram, now: 0) }
        }
        #expect(pair.server.state == .closed)
    }

    /// Invalid records are dropped silently (RFC 6347 §4.1.2.7): a spoofed datagram cannot break a handshake.
    @Test func garbageDuringTheHandshakeIsIgnored() throws {
        let pair = try Pair()
        #expect(try pair.server.handle([22, 0xFE, 0xFD] + Array(repeating: 0xEE, count: 60), now: 0).isEmpty)
        #expect(pair.server.state == .handshaking)
        try pair.runHandshake()
        #expect(pair.server.isConnected)
    }

    @Test func certificatesAreFreshAndHaveSHA256Fingerprints() throws {
        let a = try DTLSCertificate(), b = try DTLSCertificate()
        #expect(a.fingerprint.digest.count == 32)
        #expect(a.fingerprint.algorithm == "sha-256")
        #expect(a.fingerprint != b.fingerprint)
    }
}
