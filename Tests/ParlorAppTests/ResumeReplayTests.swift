import Foundation
import ParlorApp
import Testing

/// A resume far behind gets its whole replay under the normal output limit, paced as the client reads (issue 17).
@Suite struct ResumeReplayTests {
    /// Bob joins `room` and drops; then 8,000 events happen (well over the 1 MiB output limit once encoded).
    /// Returns Bob's token, session, last event id, the newest id and the client that made the events.
    static func bobFallsFarBehind(_ app: ParlorApplication, in room: String) throws
        -> (token: String, session: String, last: Int, newest: Int, churn: TestWebSocket) {
        let bobToken = try token(app, "bob")
        let bob = try TestWebSocket(port: app.port, token: bobToken)
        _ = try bob.join(room)
        let last = try #require(bob.lastEventIDs[room])
        bob.drop()
        let churn = try TestWebSocket(app, name: "churn")
        for round in 0..<40 {
            for pair in 0..<100 {
                try churn.sendText(#"{"type":"conversation:join","tid":"j\#(round)-\#(pair)","body":{"cid":"\#(room)"}}"#)
                try churn.sendText(#"{"type":"conversation:leave","tid":"l\#(round)-\#(pair)","body":{"cid":"\#(room)"}}"#)
            }
            try churn.sync()
        }
        let newest = try #require(churn.lastEventIDs[room])
        #expect(newest - last >= 8_000)
        return (bobToken, bob.sessionID, last, newest, churn)
    }

    @Test func resumeThousandsOfEventsBehindReplaysThemAllInOrder() throws {
        try withServer({ $0.rooms.gracePeriod = .seconds(120) }) { app in
            let room = try createRoom(app)
            let (bobToken, session, last, newest, churn) = try Self.bobFallsFarBehind(app, in: room)

            let back = try TestWebSocket(port: app.port, token: bobToken)
            let resumed = try back.call("session:resume", ["session_id": session, "last_event_ids": [room: last]])
            #expect((resumed["resumed"] as? [[String: Any]])?.count == 1)
            #expect((resumed["lost"] as? [Any])?.isEmpty == true)
            // The ping's reply comes after everything queued before it, the whole replay included.
            try back.sync()
            #expect(back.eventIDs[room] == Array((last + 1)...newest), "replayed \(back.eventIDs[room]?.count ?? 0) events")
            // Still connected, and live events follow the replay.
            _ = try churn.join(room)
            let live = try back.next { $0["cid"] as? String == room && $0["id"] as? Int == newest + 1 }
            #expect(live["type"] as? String == "member:joined")
        }
    }
}
