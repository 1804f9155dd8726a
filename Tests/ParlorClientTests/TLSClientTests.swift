#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// https:// and wss:// through OpenSSL against an in-process server with a self-signed certificate: trusted through
/// that certificate as the CA, refused (client:error:tls, never plain) without it or for another name.
@Suite struct TLSClientTests {
    @Test func aSelfSignedServerTrustedThroughItsCertificateServesTheWholeSession() async throws {
        try await withSelfSignedServer { app, certificate in
            let server = try tlsServer("https://127.0.0.1:\(app.port)", TLSTrust(caFile: certificate))
            #expect(server.usesTLS)
            // A DNS name (with SNI) as well as the IP address: the certificate names localhost and 127.0.0.1.
            let byName = try tlsServer("wss://localhost:\(app.port)", TLSTrust(caFile: certificate))
            let room = try await server.createRoom(displayName: "Over TLS")
            let alice = try await server.session("alice")
            let bob = try await byName.session("bob")
            let aliceEvents = Collector.consuming(alice.events)
            let aliceStates = Collector.consuming(alice.connectionStates)
            _ = try await alice.join(room.id)
            let bobJoin = try await bob.join(room.id)
            _ = try await aliceEvents.first("bob's member:joined") { $0.isMember(.memberJoined, bobJoin.memberID) }

            // A drop over wss: the reconnect is a new TLS connection, and the session resumes with what it missed.
            await alice.pauseReconnects()
            await alice.simulateNetworkDrop()
            _ = try await aliceStates.first("reconnecting") { $0.isReconnecting }
            try await bob.leave(room.id)
            await alice.resumeReconnects()
            let resumed = try await aliceStates.first("resumed") { $0.isResumed }
            guard case .resumed(_, let resumedRooms, let lost) = resumed else { return }
            #expect(resumedRooms == [room.id])
            #expect(lost.isEmpty)
            let left = try await aliceEvents.first("bob's member:left, missed while away") { $0.isMember(.memberLeft, bobJoin.memberID) }
            #expect(left.user?.name == "bob")
            let members = try await alice.members(in: room.id)
            #expect(members.members.map(\.user.name) == ["alice"])
            for session in [alice, bob] { await session.close() }
        }
    }

    @Test func theIdleTimeoutHoldsOverTLSAsOverPlainSockets() async throws {
        try await withSelfSignedServer({ $0.http.webSocket.pingInterval = .seconds(30) }) { app, certificate in
            var configuration = ParlorClientConfiguration.fastForTests
            configuration.tls = TLSTrust(caFile: certificate)
            configuration.idleTimeout = .milliseconds(300)  // the server pings a silent connection only after 30 s
            let server = try ParlorServer(url: URL(string: "wss://127.0.0.1:\(app.port)")!, configuration: configuration)
            let alice = try await server.session("alice")
            let states = Collector.consuming(alice.connectionStates)
            let started = ContinuousClock.now
            _ = try await states.first(timeout: .seconds(5), "reconnecting after the idle timeout") { $0.isReconnecting }
            #expect(ContinuousClock.now - started >= .milliseconds(250))
            await alice.close()
        }
    }

    @Test func aResponseSpanningManyTLSRecordsArrivesWhole() async throws {
        try await withSelfSignedServer { app, certificate in
            let server = try tlsServer("https://127.0.0.1:\(app.port)", TLSTrust(caFile: certificate))
            let displayName = String(repeating: "n", count: 90)
            for index in 0..<100 { _ = try await server.createRoom(displayName: "\(displayName)\(index)") }
            let rooms = try await server.rooms(pageSize: 1000)  // over 16 KiB of JSON: more than one TLS record
            #expect(rooms.count == 100)
            #expect(Set(rooms.map(\.displayName)).count == 100)
        }
    }

    @Test func withoutTheServersCertificateTheConnectionIsRefusedNotDowngraded() async throws {
        try await withSelfSignedServer { app, certificate in
            let trusted = try tlsServer("https://127.0.0.1:\(app.port)", TLSTrust(caFile: certificate))
            let jwt = try await trusted.auth(name: "alice").jwt

            // The system's CA store does not vouch for a self-signed certificate: neither HTTP nor the WebSocket.
            let systemStore = try tlsServer("https://127.0.0.1:\(app.port)", TLSTrust())
            let httpError = await parlorError { _ = try await systemStore.rooms() }
            #expect(httpError?.code == ParlorError.Code.tls)
            #expect(httpError?.detail.contains("untrusted certificate") == true, "\(String(describing: httpError))")
            let webSocketError = await parlorError { _ = try await systemStore.connect(token: jwt) }
            #expect(webSocketError?.code == ParlorError.Code.tls)

            // A custom CA replaces the system's store: another certificate, given as PEM bytes, does not vouch either.
            try await withTemporaryFiles { directory in
                let other = try makeCertificate(in: directory, names: "DNS:localhost,IP:127.0.0.1")
                let otherCA = try tlsServer("wss://127.0.0.1:\(app.port)", TLSTrust(caPEM: Array(try Data(contentsOf: URL(fileURLWithPath: other.certificate)))))
                let error = await parlorError { _ = try await otherCA.connect(token: jwt) }
                #expect(error?.code == ParlorError.Code.tls)
                #expect(error?.detail.contains("untrusted certificate") == true, "\(String(describing: error))")
            }
            // The right certificate as PEM bytes works.
            let pem = Array(try Data(contentsOf: URL(fileURLWithPath: certificate)))
            let byBytes = try tlsServer("wss://127.0.0.1:\(app.port)", TLSTrust(caPEM: pem))
            let session = try await byBytes.connect(token: jwt)
            try await session.ping()
            await session.close()
        }
    }

    @Test func aCertificateForAnotherNameIsRefused() async throws {
        try await withTemporaryFiles { directory in
            let files = try makeCertificate(in: directory, names: "DNS:parlor.invalid")
            let (app, _) = try startServer {
                $0.http.tlsCertificatePath = files.certificate
                $0.http.tlsPrivateKeyPath = files.key
            }
            defer { app.shutdown() }
            for host in ["127.0.0.1", "localhost"] {  // the IP address check, then the DNS name check
                let server = try tlsServer("https://\(host):\(app.port)", TLSTrust(caFile: files.certificate))
                let error = await parlorError { _ = try await server.auth(name: "alice") }
                #expect(error?.code == ParlorError.Code.tls, "\(host)")
                #expect(error?.detail.contains("name mismatch") == true, "\(host): \(String(describing: error))")
            }
        }
    }

    @Test func httpsToAPlainServerIsATLSErrorAndHTTPStillWorks() async throws {
        let (app, plain) = try startServer()
        defer { app.shutdown() }
        let server = try tlsServer("https://127.0.0.1:\(app.port)", TLSTrust())
        let error = await parlorError { _ = try await server.auth(name: "alice") }
        #expect(error?.code == ParlorError.Code.tls, "\(String(describing: error))")
        let webSocket = try tlsServer("wss://127.0.0.1:\(app.port)", TLSTrust())
        #expect(await parlorError { _ = try await webSocket.connect(token: "x") }?.code == ParlorError.Code.tls)
        #expect(!plain.usesTLS)
        let room = try await plain.createRoom(displayName: "Plain still works")
        let session = try await plain.session("alice")
        #expect(try await session.join(room.id).roomID == room.id)
        await session.close()
    }

    @Test func aServerThatNeverAnswersTheHandshakeTimesOut() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        var configuration = ParlorClientConfiguration.fastForTests
        configuration.connectTimeout = .milliseconds(500)
        configuration.requestTimeout = .milliseconds(500)
        let server = try ParlorServer(url: URL(string: "https://127.0.0.1:\(listener.port)")!, configuration: configuration)
        let started = ContinuousClock.now
        let error = await parlorError { _ = try await server.auth(name: "alice") }
        #expect(error?.code == ParlorError.Code.timedOut, "\(String(describing: error))")
        #expect(error?.detail.contains("TLS handshake") == true)
        #expect(ContinuousClock.now - started < .seconds(5))
        let webSocketError = await parlorError { _ = try await server.connect(token: "x") }
        #expect(webSocketError?.code == ParlorError.Code.timedOut)
    }

    @Test func unusableCASettingsAreTLSErrorsThatSayWhy() async throws {
        try await withTemporaryFiles { directory in
            let notPEM = directory + "/not-a-certificate.pem"
            try Data("hello".utf8).write(to: URL(fileURLWithPath: notPEM))
            let cases: [(TLSTrust, String)] = [
                (TLSTrust(caFile: directory + "/missing.pem"), "cannot read the CA file"),
                (TLSTrust(caFile: notPEM), "holds no PEM certificate"),
                (TLSTrust(caPEM: Array("-----BEGIN CERTIFICATE-----\nnot base64\n".utf8)), "hold no certificate"),
            ]
            for (trust, expected) in cases {
                // Port 9 on 127.0.0.1 (discard, nothing listens): the CA is loaded before any connection.
                let server = try tlsServer("https://127.0.0.1:9", trust)
                let error = await parlorError { _ = try await server.auth(name: "alice") }
                #expect(error?.code == ParlorError.Code.tls, "\(trust)")
                #expect(error?.detail.contains(expected) == true, "\(String(describing: error))")
            }
        }
    }

    @Test func urlsChooseTLSAndItsDefaultPort() throws {
        let cases: [(String, Bool, Int)] = [("https://example.org", true, 443), ("wss://example.org:8443/x", true, 8443),
                                            ("http://example.org", false, 80), ("ws://example.org:8080", false, 8080)]
        for (text, tls, port) in cases {
            let server = try ParlorServer(url: URL(string: text)!)
            #expect(server.usesTLS == tls, "\(text)")
            #expect(server.port == port, "\(text)")
        }
        #expect(ParlorServer(host: "127.0.0.1", port: 1, tls: true).usesTLS)
        #expect(throws: ParlorError.self) { try ParlorServer(url: URL(string: "ftp://example.org")!) }
    }

    @Test func pemTextYieldsEachCertificatesDER() async throws {
        try await withTemporaryFiles { directory in
            let first = try makeCertificate(in: directory + "/a", names: "DNS:a.invalid")
            let second = try makeCertificate(in: directory + "/b", names: "DNS:b.invalid")
            let both = try Data(contentsOf: URL(fileURLWithPath: first.certificate)) + Data(contentsOf: URL(fileURLWithPath: second.certificate))
            let der = PEMCertificates.der(in: Array(both))
            #expect(der.count == 2)
            #expect(der.allSatisfy { $0.first == 0x30 && $0.count > 100 })  // an ASN.1 SEQUENCE: the certificate
            #expect(der[0] != der[1])
            #expect(PEMCertificates.der(in: Array("no certificate here".utf8)).isEmpty)
        }
    }
}

// MARK: Helpers

/// A ParlorServer for `url` with the test timeouts and `trust`.
private func tlsServer(_ url: String, _ trust: TLSTrust) throws -> ParlorServer {
    var configuration = ParlorClientConfiguration.fastForTests
    configuration.tls = trust
    return try ParlorServer(url: URL(string: url)!, configuration: configuration)
}

/// An in-process server started with --tls-self-signed semantics: the certificate made in its data directory (for
/// localhost and 127.0.0.1), passed to `body` as a path.
private func withSelfSignedServer(_ configure: (inout AppConfiguration) -> Void = { _ in },
                                  _ body: (ParlorApplication, String) async throws -> Void) async throws {
    try await withTemporaryFiles { directory in
        let (app, _) = try startServer {
            $0.tlsSelfSigned = true
            $0.dataDirectory = directory
            configure(&$0)
        }
        defer { app.shutdown() }
        #expect(app.baseURL.hasPrefix("https://"))
        try await body(app, directory + "/tls-cert.pem")
    }
}

private func withTemporaryFiles<T>(_ body: (String) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-client-tls-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

/// A self-signed P-256 certificate for `names` ("DNS:…,IP:…"), made by the same OpenSSL code as --tls-self-signed.
private func makeCertificate(in directory: String, names: String) throws -> (certificate: String, key: String) {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let certificate = directory + "/cert.pem", key = directory + "/key.pem"
    guard parlor_write_self_signed(certificate, key, "Parlor test", names, 1) == 1 else {
        throw TestTimeout(description: "cannot write a self-signed certificate in \(directory)")
    }
    return (certificate, key)
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel completes the TCP handshake, then nothing answers.
private final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, bound, listen(fd, 8) == 0 else { throw TestTimeout(description: "cannot listen on 127.0.0.1") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        _ = Glibc.close(fd)
    }
}
