import Foundation
import Testing
import ParlorApp

/// Issue 34, item 18: only http:// receivers were allowed. https:// goes through OpenSSL with the receiver's
/// certificate verified: a self-signed one is refused against the system CA store and accepted with --webhook-ca-file.
@Suite struct WebhookTLSTests {
    @Test func selfSignedHTTPSReceiverIsRefusedWithoutTheCAFileAndServedWithIt() throws {
        let files = try TLSTests.makeCertificate()
        defer { try? FileManager.default.removeItem(at: files.directory) }

        let untrusted = try WebhookReceiver(failFirst: 0, tls: (files.certificate, files.key))
        defer { untrusted.stop() }
        try withServer({
            $0.webhookURLs = ["https://127.0.0.1:\(untrusted.port)/hooks"]
            $0.webhookInitialBackoff = .milliseconds(20)
        }) { app in
            _ = try createRoom(app)
            // Two handshakes refused (a retry too): never sent unverified.
            try untrusted.waitForRefusedHandshakes(count: 2)
            #expect(untrusted.accepted.isEmpty)
            // The first attempt failed (and was counted) before its retry's handshake.
            #expect(app.metrics.webhookFailures.load() >= 1)
        }

        let trusted = try WebhookReceiver(failFirst: 0, tls: (files.certificate, files.key))
        defer { trusted.stop() }
        try withServer({
            $0.webhookURLs = ["https://127.0.0.1:\(trusted.port)/hooks?over=tls"]
            $0.webhookCAFile = files.certificate
            $0.webhookInitialBackoff = .milliseconds(20)
        }) { app in
            let room = try createRoom(app)
            let request = try #require(try trusted.waitFor(count: 1).first)
            #expect(request.event == "room_started")
            #expect(request.path == "/hooks?over=tls")
            #expect((request.json["room"] as? [String: Any])?["id"] as? String == room)
        }
    }

    @Test func httpsURLsAreAcceptedOnTheCommandLineAndOtherSchemesRefused() throws {
        #expect(throws: Never.self) {
            _ = try AppConfiguration.parse(arguments: ["--webhook-urls", "https://hooks.example.com/parlor,http://127.0.0.1:9/x"], environment: [:])
        }
        #expect(throws: ConfigurationError.self) { _ = try AppConfiguration.parse(arguments: ["--webhook-urls", "ftp://hooks.example.com/"], environment: [:]) }
    }
}
