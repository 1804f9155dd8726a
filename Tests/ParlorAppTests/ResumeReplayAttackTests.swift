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
