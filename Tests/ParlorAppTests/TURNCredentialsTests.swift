import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// Time-limited TURN credentials (coturn's REST-API shared secret) in session:success and session:resume.
@Suite struct TURNCredentialsTests {
    static let secret = "parlor-turn-secret-0123"
    static let turnURL = "turn:turn.example.test:3478?transport=udp"

    static func withTURN(_ configuration: inout AppConfiguration) {
        configuration.rooms.gracePeriod = .seconds(30)
        configuration.iceURLs = ["stun:stun.example.test:3478", "turn:static.example.test:3478"]
        configuration.iceUsername = "static-user"
        configuration.iceCredential = "static-password"
        configuration.turnSecret = secret
        configuration.turnURLs = [turnURL]
        configuration.turnTTLSeconds = 3600
    }

    /// Known answers computed outside Parlor: RFC 2202's HMAC-SHA1 test case 2, and Python's
    /// `base64.b64encode(hmac.new(b"parlor-turn-secret-0123", b"1700000000:USR-abc", hashlib.sha1).digest())`.
    @Test func credentialIsBase64OfHMACSHA1OfTheUsername() {
        #expect(TURNCredentials.credential(for: "what do ya want for nothing?", secret: Array("Jefe".utf8)) == "7/zfauXrL6LSdBbV8YTfnCWafHk=")
        #expect(TURNCredentials.credential(for: "1700000000:USR-abc", secret: Array(Self.secret.utf8)) == "FiPdMgnljK43IjNghzH/FiT9Zxg=")
        let turn = TURNCredentials(secret: Array(Self.secret.utf8), urls: [Self.turnURL], timeToLiveSeconds: 600)
        let server = turn.server(for: "USR-abc", now: 1_699_999_400)
        #expect(server == ICEServer(urls: [Self.turnURL], username: "1700000000:USR-abc", credential: "FiPdMgnljK43IjNghzH/FiT9Zxg="))
    }

    /// The TURN entry of an `ice_servers` list, checked: username `<expiry>:<user id>` with the expiry `ttl` seconds
    /// after a moment in `window` (unix seconds), and the credential that matches it. Returns the expiry.
    private func checkTURNEntry(_ servers: [[String: Any]], userID: String, window: ClosedRange<Int64>) throws -> Int64 {
        #expect(servers.count == 3, "two static entries and the TURN one: \(servers)")
        #expect(servers.first?["urls"] as? [String] == ["stun:stun.example.test:3478"])
        #expect(servers.dropFirst().first?["username"] as? String == "static-user")
        #expect(servers.dropFirst().first?["credential"] as? String == "static-password")
        let entry = try #require(servers.last)
        #expect(entry["urls"] as? [String] == [Self.turnURL])
        let username = try #require(entry["username"] as? String)
        let parts = username.split(separator: ":", maxSplits: 1).map(String.init)
        #expect(parts.count == 2 && parts.last == userID, "username \(username)")
        let expiry = try #require(Int64(parts.first ?? ""))
        #expect((window.lowerBound + 3600)...(window.upperBound + 3600) ~= expiry, "expiry \(expiry), window \(window)")
        #expect(entry["credential"] as? String == TURNCredentials.credential(for: username, secret: Array(Self.secret.utf8)))
        return expiry
    }

    private func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }

    @Test func sessionSuccessAndResumeCarryFreshTURNCredentials() throws {
        try withServer(Self.withTURN) { app in
            let room = try createRoom(app)
            let aliceToken = try token(app, "alice")
            var before = unixNow()
            let alice = try TestWebSocket(port: app.port, token: aliceToken, awaitSession: false)
            let hello = try alice.next { $0["type"] as? String == "session:success" }
            var after = unixNow()
            let body = hello["body"] as? [String: Any] ?? [:]
            let userID = try #require((body["user"] as? [String: Any])?["id"] as? String)
            let sessionID = try #require(body["session_id"] as? String)
            let first = try checkTURNEntry(body["ice_servers"] as? [[String: Any]] ?? [], userID: userID, window: before...after)

            _ = try alice.call("conversation:join", ["cid": room])
            try alice.sync()
            let last = alice.lastEventIDs[room] ?? 0
            alice.drop()
            let back = try TestWebSocket(port: app.port, token: aliceToken)
            before = unixNow()
            let resumed = try back.call("session:resume", ["session_id": sessionID, "last_event_ids": [room: last]])
            after = unixNow()
            #expect((resumed["resumed"] as? [[String: Any]])?.first?["cid"] as? String == room)
            let again = try checkTURNEntry(resumed["ice_servers"] as? [[String: Any]] ?? [], userID: userID, window: before...after)
            #expect(again >= first)
        }
    }

    @Test func withoutTURNSecretOnlyStaticServersAreHandedOut() throws {
        try withServer({ $0.iceURLs = ["stun:stun.example.test:3478"] }) { app in
            let hello = try TestWebSocket(port: app.port, token: try token(app, "alice"), awaitSession: false)
            let session = try hello.next { $0["type"] as? String == "session:success" }
            let body = session["body"] as? [String: Any] ?? [:]
            let servers = body["ice_servers"] as? [[String: Any]] ?? []
            #expect(servers.count == 1)
            #expect(servers.first?["username"] == nil)
            let resumed = try hello.call("session:resume", ["session_id": body["session_id"] as? String ?? ""])
            #expect((resumed["ice_servers"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test func turnOptionsAreValidated() throws {
        let good = try AppConfiguration.parse(arguments: ["--turn-secret", Self.secret, "--turn-urls", "turn:a.test:3478, turns:a.test:5349",
                                                          "--turn-ttl", "600"], environment: [:])
        #expect(good.turnURLs == ["turn:a.test:3478", "turns:a.test:5349"])
        #expect(good.turnTTLSeconds == 600)
        #expect(try AppConfiguration.parse(arguments: [], environment: ["PARLOR_TURN_SECRET": Self.secret]).turnSecret == Self.secret)
        #expect(try AppConfiguration.parse(arguments: [], environment: [:]).turnTTLSeconds == 86_400)

        func message(_ arguments: [String]) -> String? {
            do {
                _ = try AppConfiguration.parse(arguments: arguments, environment: [:])
                return nil
            } catch {
                return error.message
            }
        }
        #expect(message(["--turn-secret", "short"]) == "--turn-secret must be at least 16 bytes long")
        #expect(message(["--turn-urls", "stun:a.test:3478"]) == "--turn-urls takes turn: or turns: URLs")
        #expect(message(["--turn-urls", " , "]) == "--turn-urls takes turn: or turns: URLs")
        #expect(message(["--turn-ttl", "0"])?.hasPrefix("--turn-ttl must be a whole number from 60 to 604800") == true)
        #expect(message(["--turn-ttl", "604801"]) != nil)

        // One without the other is a mistake the operator should hear about at start, not a silent no-TURN.
        for half in [{ (c: inout AppConfiguration) in c.turnSecret = Self.secret }, { (c: inout AppConfiguration) in c.turnURLs = [Self.turnURL] }] {
            #expect(throws: ConfigurationError.self) { try withServer(half) { _ in } }
        }
    }
}
