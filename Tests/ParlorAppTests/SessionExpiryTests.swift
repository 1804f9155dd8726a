import Foundation
import Testing
import ParlorApp

/// Weakness: every WebSocket connect added a sessions row that was never deleted.
@Suite struct SessionExpiryTests {
    private func sessionRows(_ app: ParlorApplication) throws -> Int64 {
        try app.database.read { try $0.queryOne("SELECT COUNT(*) AS n FROM sessions")?.int("n") } ?? -1
    }

    @Test func endedSessionsAreDeletedAfterTheGracePeriod() throws {
        try withServer({ $0.rooms.gracePeriod = .milliseconds(200) }) { app in
            let live = try TestWebSocket(app, name: "stays")
            for index in 0..<20 {
                let client = try TestWebSocket(app, name: "visitor\(index)")
                client.drop()
            }
            try live.sync()
            let deadline = Date().addingTimeInterval(5)
            while try sessionRows(app) > 1, Date() < deadline { usleep(50_000) }
            #expect(try sessionRows(app) == 1, "only the live session is kept")
            // The live one still works, and its row is the one kept.
            try live.sync()
            let kept = try app.database.read { try $0.queryOne("SELECT id FROM sessions")?.string("id") }
            #expect(kept == live.sessionID)
        }
    }
}
