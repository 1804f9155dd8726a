#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import Foundation
import Testing
import ParlorApp
import ParlorCodec

/// HTTPS and WSS with a self-signed certificate made for the test; TLS below 1.2 and plain HTTP are refused.
@Suite struct TLSTests {
    /// A fresh self-signed certificate for 127.0.0.1 in a temporary directory.
    static func makeCertificate() throws -> (directory: URL, certificate: String, key: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                             "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1",
                             "-addext", "subjectAltName=IP:127.0.0.1"]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else { throw TestFailure("openssl req failed") }
        return (directory, certificate, key)
    }

    @Test func httpsAndWSSWork() throws {
        let files = try Self.makeCertificate()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        try withServer({ $0.http.tlsCertificatePath = files.certificate; $0.http.tlsPrivateKeyPath = files.key }) { app in
            #expect(app.baseURL.hasPrefix("https://"))
            let client = try TLSClient(port: app.port)
            #expect(client.protocolVersion == "TLSv1.3")
            try client.send("POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 16\r\n\r\n{\"name\":\"alice\"}")
            let auth = try client.readHTTP()
            #expect(auth.hasPrefix("HTTP/1.1 200"))
            let jwt = try #require(auth.split(separator: "\"jwt\":\"").last?.split(separator: "\"").first.map(String.init))

            // Keep-alive on the same TLS connection, then an upgrade to WSS.
            let key = "dGhlIHNhbXBsZSBub25jZQ=="
            try client.send("GET /ws?token=\(jwt) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n")
            let upgrade = try client.readHTTP()
            #expect(upgrade.hasPrefix("HTTP/1.1 101"))
            var decoder = WebSocketDecoder(role: .client, maxFrameSize: 1 << 20, maxMessageSize: 1 << 20)
            var hello: WebSocketMessage?
            while hello == nil {
                decoder.append(try client.receive())
                hello = try decoder.next()
            }
            guard case .text(let text)? = hello else { throw TestFailure("expected a text frame") }
            #expect(text.contains("session:success"))
        }
    }

    @Test func oldTLSAndPlainHTTPAreRefused() throws {
        let files = try Self.makeCertificate()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        try withServer({ $0.http.tlsCertificatePath = files.certificate; $0.http.tlsPrivateKeyPath = files.key }) { app in
            #expect(throws: TestFailure.self) { try TLSClient(port: app.port, maxVersion: TLS1_1_VERSION) }
            let plain = try RawConnection(port: app.port)
            try plain.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try plain.waitForClose())
            // The server is still serving TLS clients afterwards.
            let client = try TLSClient(port: app.port)
            try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readHTTP().hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func selfSignedCertificateIsMadeOnceForALAN() throws {
        try withTemporaryDirectory { directory in
            var fingerprints: [Data] = []
            for _ in 0..<2 {
                try withServer({ $0.tlsSelfSigned = true; $0.dataDirectory = directory }) { app in
                    #expect(app.baseURL.hasPrefix("https://"))
                    let client = try TLSClient(port: app.port)
                    try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                    #expect(try client.readHTTP().hasPrefix("HTTP/1.1 200"))
                }
                fingerprints.append(try Data(contentsOf: URL(fileURLWithPath: directory + "/tls-cert.pem")))
            }
            #expect(fingerprints[0] == fingerprints[1], "the certificate is reused, so browsers keep their exception")
            let mode = try FileManager.default.attributesOfItem(atPath: directory + "/tls-key.pem")[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func mismatchedKeyStopsTheStart() throws {
        let first = try Self.makeCertificate()
        let second = try Self.makeCertificate()
        defer {
            try? FileManager.default.removeItem(at: first.directory)
            try? FileManager.default.removeItem(at: second.directory)
        }
        #expect(throws: (any Error).self) {
            try withServer({ $0.http.tlsCertificatePath = first.certificate; $0.http.tlsPrivateKeyPath = second.key }) { _ in }
        }
    }
}

/// A blocking OpenSSL client for the tests (no certificate verification: the certificate is the test's own).
final class TLSClient {
    private let connection: RawConnection
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    init(port: Int, maxVersion: Int32 = 0) throws {
        connection = try RawConnection(port: port)
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TestFailure("SSL_CTX_new") }
        self.context = context
        if maxVersion != 0 {
            _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_VERSION), nil)
            _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(maxVersion), nil)
            SSL_CTX_set_security_level(context, 0)
        }
        guard let ssl = SSL_new(context) else { throw TestFailure("SSL_new") }
        self.ssl = ssl
        SSL_set_fd(ssl, connection.fd)
        guard SSL_connect(ssl) == 1 else { throw TestFailure("TLS handshake failed") }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard SSL_write(ssl, bytes, Int32(bytes.count)) == Int32(bytes.count) else { throw TestFailure("SSL_write failed") }
    }

    func receive() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = SSL_read(ssl, &buffer, Int32(buffer.count))
        guard count > 0 else { throw TestFailure("SSL_read failed") }
        return Array(buffer[0..<Int(count)])
    }

    /// One HTTP response head and its Content-Length body, as text.
    func readHTTP() throws -> String {
        var data: [UInt8] = []
        while true {
            if let end = data.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: data[..<end.lowerBound], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                while data.count < end.upperBound + length { data += try receive() }
                return String(decoding: data[..<(end.upperBound + length)], as: UTF8.self)
            }
            data += try receive()
        }
    }
}
