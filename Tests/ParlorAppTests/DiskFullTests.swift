import Foundation
import Testing
import ParlorApp

/// Weaknesses: with the disk full, writes failed with 500 while /healthz said ok, a new WebSocket never got
/// session:success, and a member whose connection dropped meanwhile stayed JOINED until a restart.
@Suite struct DiskFullTests {
    /// Pings far apart, so a message that never comes fails the test at the client's 5 s read timeout instead of
    /// being waited for forever between pings.
    private static func quiet(_ configuration: inout AppConfiguration) {
        configuration.http.webSocket.pingInterval = .seconds(60)
        configuration.http.webSocket.pongTimeout = .seconds(120)
    }

    /// Polls GET /healthz until it answers `status` (the state changes on another thread), or 5 s pass.
    private func health(_ app: ParlorApplication, becomes status: Int) throws -> TestResponse {
        let deadline = Date().addingTimeInterval(5)
        var response = try http(app, "GET", "/healthz")
        while response.status != status, Date() < deadline {
            usleep(20_000)
            response = try http(app, "GET", "/healthz")
        }
        return response
    }

    @Test func healthAndNewSessionsReportAFullDiskUntilWritesWorkAgain() throws {
        try withServer(Self.quiet) { app in
            #expect(try http(app, "GET", "/healthz").status == 200)
            let jwt = try token(app, "carol")
            try DiskFull.fill(app)

            let create = try http(app, "POST", "/rooms", json: #"{"display_name":"no space"}"#)
            #expect(create.status == 503)
            #expect(create.errorCode == "server:error:unavailable")
            let unhealthy = try http(app, "GET", "/healthz")
            #expect(unhealthy.status == 503)
            #expect((unhealthy.object["detail"] as? String)?.contains("full") == true, "\(unhealthy.text)")

            // A new session is told why and closed with 1011, instead of waiting forever for session:success.
            let refused = try TestWebSocket(port: app.port, token: jwt, awaitSession: false)
            let error = try refused.next { _ in true }
            #expect(error["type"] as? String == "error")
            #expect(errorCode(error) == "server:error:unavailable")
            #expect(try refused.closeCode() == 1011)

            try DiskFull.free(app)
            #expect(try health(app, becomes: 200).status == 200, "health recovers once a write commits again")
            let welcome = try TestWebSocket(port: app.port, token: jwt)
            #expect(!welcome.sessionID.isEmpty)
            #expect(try http(app, "POST", "/rooms", json: #"{"display_name":"space again"}"#).status == 201)
        }
    }

    @Test func memberDroppedWhileTheDiskWasFullLeavesOnceSpaceReturns() throws {
        try withServer({ Self.quiet(&$0); $0.rooms.gracePeriod = .milliseconds(300) }) { app in
            let pair = try TwoMembers(app)
            try DiskFull.fill(app)
            pair.bob.drop()
            // The disconnect's write failed: health says so.
            #expect(try health(app, becomes: 503).status == 503)
            // Full past the grace period, so the drop itself fails too and must be retried.
            usleep(500_000)
            try pair.alice.sync()
            try DiskFull.free(app)

            let left = try pair.alice.event("member:left", in: pair.room, member: pair.bobMember)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
            #expect(memberNames(try pair.alice.call("conversation:members", ["cid": pair.room])) == ["alice"])
            #expect(try health(app, becomes: 200).status == 200)
        }
    }
}
