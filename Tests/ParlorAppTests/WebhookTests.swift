#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
@testable import ParlorStore

/// Webhooks reach a receiver on 127.0.0.1 in order, signed, and are retried when it fails.
@Suite struct WebhookTests {
    @Test func roomAndMemberEventsArriveSignedInOrderWithRetries() throws {
        let receiver = try WebhookReceiver(failFirst: 2)
        defer { receiver.stop() }
        let secret = "webhook-secret-for-tests"
        try withServer({
            $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks?source=parlor"]
            $0.webhookSecret = secret
            $0.webhookInitialBackoff = .milliseconds(20)
        }) { app in
            let members = try TwoMembers(app)
            let (room, bob) = (members.room, members.bob)
            _ = try bob.call("conversation:leave", ["cid": room])

            let received = try receiver.waitFor(count: 4)
            #expect(received.map(\.event) == ["room_started", "member_joined", "member_joined", "member_left"])
            #expect(receiver.failedAttempts == 2, "the first deliveries were refused and had to be retried")
            for request in received {
                #expect(request.path == "/hooks?source=parlor")
                #expect(request.signature == "sha256=" + Self.hmacSHA256(key: Array(secret.utf8), message: request.body).map { String(format: "%02x", $0) }.joined())
                let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
                #expect((json["room"] as? [String: Any])?["id"] as? String == room)
            }
            let left = try #require(try JSONSerialization.jsonObject(with: Data(received[3].body)) as? [String: Any])
            #expect(left["reason"] as? String == "left")
            #expect(((left["member"] as? [String: Any])?["user"] as? [String: Any])?["name"] as? String == "bob")
            #expect(left["room_event_id"] as? Int == 3)
        }
    }

    /// A receiver that refuses for longer than a few attempts still gets the webhook, once it answers again: the
    /// outbox gives a webhook up only after `--webhook-retry-for` (it gave up after 8 attempts, a minute, before).
    @Test func aWebhookIsRetriedUntilItsReceiverTakesItWithinTheRetryTime() throws {
        let receiver = try WebhookReceiver(failFirst: 12)
        defer { receiver.stop() }
        try withServer({
            $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks"]
            $0.webhookInitialBackoff = .milliseconds(1)
        }) { app in
            _ = try createRoom(app)
            let delivered = try receiver.waitFor(count: 1, timeout: 30)
            #expect(delivered.map(\.event) == ["room_started"])
            #expect(receiver.failedAttempts == 12)
        }
    }

    /// Past `--webhook-retry-for`, a webhook its receiver keeps refusing is given up and counted as expired.
    @Test func aWebhookRefusedForTheWholeRetryTimeIsGivenUpAndCounted() throws {
        let receiver = try WebhookReceiver(failFirst: Int.max)
        defer { receiver.stop() }
        try withServer({
            $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks"]
            $0.webhookInitialBackoff = .milliseconds(20)
            $0.webhookRetrySeconds = 0.3
        }) { app in
            _ = try createRoom(app)
            let deadline = Date().addingTimeInterval(10)
            while app.metrics.webhookGaveUp.load() == 0, Date() < deadline { usleep(10_000) }
            #expect(app.metrics.webhookGaveUp.load() == 1)
            #expect(receiver.failedAttempts >= 2, "it was retried before it was given up")
        }
    }

    /// Issue 17: without --webhook-secret, webhooks were signed with the JWT secret, so every receiver could mint
    /// tokens. Now a secret of their own is generated and kept in the data directory (0600).
    @Test func webhooksAreSignedWithAGeneratedSecretNotTheJWTSecret() throws {
        let receiver = try WebhookReceiver(failFirst: 0)
        defer { receiver.stop() }
        try withTemporaryDirectory { directory in
            let jwtSecret = "parlor-test-secret-parlor-test-secret"
            try withServer({
                $0.databasePath = nil
                $0.dataDirectory = directory
                $0.jwtSecret = jwtSecret
                $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks"]
            }) { app in
                _ = try createRoom(app)
                let request = try #require(try receiver.waitFor(count: 1).first)
                let path = directory + "/webhook-secret"
                let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                let generated = stride(from: 0, to: text.count, by: 2).compactMap { offset -> UInt8? in
                    let start = text.index(text.startIndex, offsetBy: offset)
                    return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)
                }
                #expect(generated.count == 32)
                let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
                #expect(mode & 0o777 == 0o600)
                func signature(_ key: [UInt8]) -> String {
                    "sha256=" + Self.hmacSHA256(key: key, message: request.body).map { String(format: "%02x", $0) }.joined()
                }
                #expect(request.signature != signature(Array(jwtSecret.utf8)), "signed with the JWT secret")
                #expect(request.signature == signature(generated))
            }
        }
    }

    /// RFC 2104 over the store's own SHA-256: independent of the OpenSSL HMAC the server signs with.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA256.digest(of: key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA256.digest(of: block.map { $0 ^ 0x36 } + message)
        return SHA256.digest(of: block.map { $0 ^ 0x5C } + inner)
    }
}
