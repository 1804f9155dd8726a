import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// Access modes, token revocation and expiry of live sessions.
@Suite struct AccessControlTests {
    static let secret = "parlor-test-secret-parlor-test-secret"

    @Test func codeModeNeedsTheCodeAndTokensEverywhere() throws {
        try withServer({ $0.access = .code; $0.accessCode = "open-sesame" }) { app in
            #expect(try http(app, "POST", "/auth", json: #"{"name":"alice"}"#).errorCode == "request:error:missing-field")
            #expect(try http(app, "POST", "/auth", json: #"{"name":"alice","code":"open-sesamE"}"#).errorCode == "auth:error:invalid-code")
            let granted = try http(app, "POST", "/auth", json: #"{"name":"alice","code":"open-sesame"}"#)
            #expect(granted.status == 200)
            let jwt = try #require(granted.object["jwt"] as? String)
            #expect(try http(app, "GET", "/rooms").status == 401)
            #expect(try http(app, "POST", "/rooms", json: #"{"display_name":"x"}"#).status == 401)
            #expect(try http(app, "GET", "/rooms", headers: ["Authorization": "Bearer \(jwt)"]).status == 200)
            #expect(throws: TestFailure.self) { try TestWebSocket(port: app.port, token: nil) }
            _ = try TestWebSocket(port: app.port, token: jwt)
        }
    }

    @Test func closedModeRefusesAuthButAcceptsMintedTokens() throws {
        try withServer({ $0.access = .closed }) { app in
            #expect(try http(app, "POST", "/auth", json: #"{"name":"alice"}"#).errorCode == "auth:error:disabled")
            // What `parlor token` or an app's backend does: sign with the shared secret.
            let minted = try TokenService(secret: Array(Self.secret.utf8), timeToLiveSeconds: 600).issue(name: "alice").token
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Backend room"}"#, headers: ["Authorization": "Bearer \(minted)"])
            #expect(created.status == 201)
            #expect(try http(app, "GET", "/rooms").status == 401)
        }
    }

    @Test func revokedTokensAreRefusedAndLiveSessionsClosed() throws {
        let admin = "admin-token-for-tests-0123456789"
        try withServer({ $0.adminToken = admin }) { app in
            let old = try token(app, "mallory")
            let socket = try TestWebSocket(port: app.port, token: old)
            let revoked = try http(app, "POST", "/users/mallory/revoke", headers: ["Authorization": "Bearer \(admin)"])
            #expect(revoked.object["connections"] as? Int == 1)
            #expect(try socket.closeCode() == 4003)
            #expect(try http(app, "GET", "/rooms", headers: ["Authorization": "Bearer \(old)"]).status == 401)
            #expect(try http(app, "POST", "/users/mallory/revoke").status == 403)
        }
    }

    @Test func sessionEndsWhenItsTokenExpires() throws {
        try withServer { app in
            let shortLived = try TokenService(secret: Array(Self.secret.utf8), timeToLiveSeconds: 600)
                .issue(name: "brief", ttl: 2).token
            let socket = try TestWebSocket(port: app.port, token: shortLived)
            // exp has whole seconds: a ttl of 1 could pass before the upgrade on a busy machine; 2 leaves at least one
            // second to connect. The server then closes with 4001 so the client knows to re-authenticate.
            socket.connection.setTimeout(10)
            #expect(try socket.closeCode() == 4001)
        }
    }
}
