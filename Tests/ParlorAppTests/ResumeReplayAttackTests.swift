#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Vulnerability (issue 34, item 1): one session id was accepted by any number of connections at once, each holding
/// a replay of thousands of events it never read. Against the binary, memory read from /proc.
@Suite struct ResumeReplayAttackTests {
    /// A room of the binary with `events` events after `mallory` joined and dropped: mallory's session and the room.
    static func roomFilledAfterADrop(_ server: ServerProcess, mallory: String, events: Int) throws -> (session: String, room: String, newest: Int) {
        let created = try RawConnection.oneRequest(server.port, "POST", "/rooms", json: #"{"display_name":"replayed"}"#,
                                                   headers: ["Authorization": "Bearer \(mallory)"])
        let room = try #require(created.object["id"] as? String, "\(created.text)")
        let dropped = try TestWebSocket(port: server.port, token: mallory)
        _ = try dropped.join(room)
        dropped.drop()
        let churn = try TestWebSocket(port: server.port, token: try TransportAttackTests.authToken(port: server.port, name: "churn"))
        var pairs = 0
        while pairs * 2 < events {
            for _ in 0..<100 {
                try churn.sendText(#"{"type":"conversation:join","tid":"j","body":{"cid":"\#(room)"}}"#)
                try churn.sendText(#"{"type":"conversation:leave","tid":"l","body":{"cid":"\#(room)"}}"#)
                pairs += 1
            }
            try churn.sync()
        }
        return (dropped.sessionID, room, try #require(churn.lastEventIDs[room]))
    }

    @Test func manyConnectionsResumingOneSessionTakeItOverOneAfterAnother() throws {
        let server = try ServerProcess(["--message-rate", "0", "--frame-rate", "0", "--grace-period", "300"])
        let mallory = try TransportAttackTests.authToken(port: server.port, name: "mallory")
        let (session, room, newest) = try Self.roomFilledAfterADrop(server, mallory: mallory, events: 9_000)
        #expect(newest >= 9_000)
        let baseline = try server.residentBytes()

        // 100 connections resume the same session from event 0 and read nothing past the reply.
        var sockets: [TestWebSocket] = []
        for _ in 0..<100 {
            let socket = try TestWebSocket(port: server.port, token: mallory, timeout: 3, receiveBufferBytes: 4096)
            let reply = try socket.request("session:resume", ["session_id": session, "last_event_ids": [room: 0]])
            #expect(reply["type"] as? String == "session:resume:success", "\(reply)")
            sockets.append(socket)
        }
        let grown = try server.residentBytes() - baseline
        #expect(!ServerProcess.checksMemory || grown < 64 * ServerProcess.mebibyte, "RSS grew by \(grown / ServerProcess.mebibyte) MiB")

        // Each resume took the session from the one before: closed with 4005, only the last one holds it.
        var codes: [UInt16?] = []
        for socket in sockets.dropLast() {
            let code = try? TransportAttackTests.closeCode(socket, within: 3)
            codes.append(code ?? nil)
            if code != 4005 { break }  // one is enough to fail, without waiting for each of the others
        }
        #expect(codes.count == 99 && codes.allSatisfy { $0 == 4005 }, "close codes \(codes.prefix(5))")
        // The holder reads its replay: every event in order, then the ping's reply.
        let holder = try #require(sockets.last)
        try holder.sync()
        #expect(holder.eventIDs[room] == Array(1...newest), "replayed \(holder.eventIDs[room]?.count ?? 0) of \(newest)")
    }
}

extension ResumeReplayAttackTests {
    /// `--replay-stall-timeout`: a resume whose replay page sits unread that long is a slow consumer (1008), so a
    /// replay cannot hold its share of the budget forever. The socket is not read while the test waits (reading would
    /// drain the page): the close shows in parlor_rate_limited_total{limit="output"}. With the default (30 s), nothing
    /// is closed within the same wait.
    @Test(arguments: [(stallSeconds: 1, closes: true), (stallSeconds: 30, closes: false)])
    func aReplayLeftUnreadIsClosedAfterTheStallTimeout(stallSeconds: Int, closes: Bool) throws {
        let server = try ServerProcess(["--message-rate", "0", "--frame-rate", "0", "--grace-period", "300",
                                        "--admin-token", AddressFloodTests.admin, "--replay-stall-timeout", String(stallSeconds)])
        let mallory = try TransportAttackTests.authToken(port: server.port, name: "mallory")
        let (session, room, _) = try Self.roomFilledAfterADrop(server, mallory: mallory, events: 10)
        // 10,000 events of about 550 bytes (joins and leaves of a member whose name is 256 bytes): 5.5 MB, more than
        // the kernel's socket buffers take in (tcp_wmem's 4 MiB here), so the replay cannot all leave the server unread.
        let churn = try TestWebSocket(port: server.port, token: try TransportAttackTests.authToken(port: server.port, name: String(repeating: "🎙", count: 64)))
        for _ in 0..<50 {
            for _ in 0..<100 {
                try churn.sendText(#"{"type":"conversation:join","tid":"j","body":{"cid":"\#(room)"}}"#)
                try churn.sendText(#"{"type":"conversation:leave","tid":"l","body":{"cid":"\#(room)"}}"#)
            }
            try churn.sync()
        }
        // Replayed from just inside --max-replay-events' reach (10,000 behind).
        let newest = try #require(churn.lastEventIDs[room])
        let socket = try TestWebSocket(port: server.port, token: mallory, timeout: 3, receiveBufferBytes: 4096)
        let reply = try socket.request("session:resume", ["session_id": session, "last_event_ids": [room: newest - 9_999]])
        #expect((reply["body"] as? [String: Any])?["lost"] as? [String] == [], "\(reply)")
        let before = try AddressFloodTests.rateLimited(server.port, "output") ?? 0

        let deadline = Date().addingTimeInterval(5)
        var closedAsSlow = false
        while !closedAsSlow && Date() < deadline {
            closedAsSlow = try (AddressFloodTests.rateLimited(server.port, "output") ?? 0) > before
            if !closedAsSlow { usleep(50_000) }  // polling a counter: no event to wait on from outside the server
        }
        #expect(closedAsSlow == closes, "stall timeout \(stallSeconds) s: closed as a slow consumer: \(closedAsSlow)")
        if closes {
            // Reading now drains what the kernel holds, then the close frame.
            #expect(try TransportAttackTests.closeCode(socket, within: 10) == 1008)
        } else {
            try socket.sync()  // the whole replay, then the ping's reply
            #expect(socket.eventIDs[room] == Array((newest - 9_998)...newest), "replayed \(socket.eventIDs[room]?.count ?? 0) of 9,999")
        }
    }
}
