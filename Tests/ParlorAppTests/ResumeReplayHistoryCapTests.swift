import Foundation
import ParlorApp
import PostgresTestCluster
import Testing

/// Stored history had no cap (issue 34, item 10): a room keeps its newest `--max-room-events`, the oldest pruned as
/// new ones come, on SQLite and PostgreSQL; ids keep rising, and a resume from before the oldest kept is `lost`.
@Suite struct ResumeReplayHistoryCapTests {
    static let cap = 200

    /// Bob joins and drops; 600 events follow. Checks what the room keeps, that ids go on, and Bob's resume.
    static func roomPastTheCap(_ app: ParlorApplication) throws {
        let room = try createRoom(app)
        let bobToken = try token(app, "bob")
        let bob = try TestWebSocket(port: app.port, token: bobToken)
        _ = try bob.join(room)
        let bobLast = try #require(bob.lastEventIDs[room])
        bob.drop()
        let churn = try TestWebSocket(app, name: "churn")
        for round in 0..<3 {
            for pair in 0..<100 {
                try churn.sendText(#"{"type":"conversation:join","tid":"j\#(round)-\#(pair)","body":{"cid":"\#(room)"}}"#)
                try churn.sendText(#"{"type":"conversation:leave","tid":"l\#(round)-\#(pair)","body":{"cid":"\#(room)"}}"#)
            }
            try churn.sync()
        }
        let newest = try #require(churn.lastEventIDs[room])
        #expect(newest >= 600)

        // Exactly the newest `cap` are kept.
        let history = try churn.call("conversation:events", ["cid": room, "since": 0, "page_size": 1000])
        let kept = (history["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        #expect(kept == Array((newest - cap + 1)...newest), "kept \(kept.count): \(kept.first ?? 0)…\(kept.last ?? 0)")
        // Ids go on from the newest.
        _ = try churn.join(room)
        #expect(churn.lastEventIDs[room] == newest + 1)
        let after = try churn.call("conversation:events", ["cid": room, "since": 0, "page_size": 1000])
        let keptAfter = (after["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        #expect(keptAfter == Array((newest - cap + 2)...(newest + 1)))

        // Bob's missed events are gone: lost, with the reason, though his membership is still there.
        let back = try TestWebSocket(port: app.port, token: bobToken)
        let resumed = try back.call("session:resume", ["session_id": bob.sessionID, "last_event_ids": [room: bobLast]])
        #expect((resumed["lost"] as? [String]) == [room])
        #expect((resumed["lost_reasons"] as? [String: String]) == [room: "history-pruned"])
        #expect((resumed["resumed"] as? [Any])?.isEmpty == true)
        // From within what is kept, a resume still replays every event after it.
        let recent = try TestWebSocket(port: app.port, token: bobToken)
        let fromKept = try recent.call("session:resume", ["session_id": back.sessionID, "last_event_ids": [room: newest - 10]])
        #expect((fromKept["resumed"] as? [Any])?.count == 1)
        try recent.sync()
        #expect(recent.eventIDs[room] == Array((newest - 9)...(newest + 1)))
    }

    @Test func onSQLite() throws {
        try withServer({ $0.rooms.maxRoomEvents = Self.cap; $0.rooms.gracePeriod = .seconds(120) }) { try Self.roomPastTheCap($0) }
    }

    @Test func onPostgreSQL() throws {
        let url = try TestPostgres.shared().makeDatabase()
        try withServer({ configuration in
            configuration.rooms.maxRoomEvents = Self.cap
            configuration.rooms.gracePeriod = .seconds(120)
            configuration.databasePath = url.string
            configuration.jwtSecret = nil
            configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        }) { try Self.roomPastTheCap($0) }
    }

    @Test func theOptionSetsTheCapWithASafeDefault() throws {
        #expect(try AppConfiguration.parse(arguments: [], environment: [:]).rooms.maxRoomEvents == 100_000)
        #expect(try AppConfiguration.parse(arguments: ["--max-room-events", "500"], environment: [:]).rooms.maxRoomEvents == 500)
        #expect(throws: ConfigurationError.self) { _ = try AppConfiguration.parse(arguments: ["--max-room-events", "0"], environment: [:]) }
    }
}
