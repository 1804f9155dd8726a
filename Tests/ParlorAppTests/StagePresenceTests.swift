import Foundation
import ParlorApp
import PostgresTestCluster
import Testing

/// Presence by role in big stage rooms (issue 37) over real sockets, on SQLite and PostgreSQL, with
/// `--full-presence-limit 5`: below it exactly today's events; above it room:presence, coalesced room:audience for
/// listeners and full events for the moderator, a summary join reply, a resume too far behind answered `lost`,
/// the switch back to full, and an audience past a page read through conversation:members.
@Suite struct StagePresenceTests {
    private static func body(_ message: [String: Any]) -> [String: Any] { message["body"] as? [String: Any] ?? [:] }

    private static func isEvent(_ type: String, about memberID: String?) -> ([String: Any]) -> Bool {
        { $0["type"] as? String == type && (memberID == nil || body($0)["member_id"] as? String == memberID) }
    }

    /// Joins a new listener; returns its connection and member id.
    private static func listener(_ app: ParlorApplication, _ name: String, _ room: String) throws -> (socket: TestWebSocket, member: String) {
        let socket = try TestWebSocket(app, name: name)
        let memberID = try #require(try socket.join(room)["member_id"] as? String)
        return (socket, memberID)
    }

    static func bigStageRoom(_ app: ParlorApplication) throws {
        let aliceToken = try token(app, "alice")
        let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Town hall","properties":{"mode":"stage"}}"#, token: aliceToken)
        let room = try #require(created.object["id"] as? String)
        let alice = try TestWebSocket(port: app.port, token: aliceToken)
        #expect(try alice.join(room)["presence"] as? String == "full")

        // Below the limit (5 members): every join to everyone, as today.
        var listeners: [(socket: TestWebSocket, member: String)] = []
        for index in 1...4 { listeners.append(try listener(app, "listener\(index)", room)) }
        let first = listeners[0].socket
        for other in listeners.dropFirst() { _ = try first.next(where: isEvent("member:joined", about: other.member)) }

        // The sixth member crosses it: its member:joined, then room:presence summary.
        let fifth = try listener(app, "listener5", room)
        let joined = try first.next(where: isEvent("member:joined", about: fifth.member))
        let switched = try first.next(where: isEvent("room:presence", about: nil))
        #expect(body(switched)["mode"] as? String == "summary")
        #expect(body(switched)["count"] as? Int == 6)
        #expect(body(switched)["last_event_id"] as? Int == joined["id"] as? Int)
        #expect(switched["id"] == nil)

        // Summary: the join reply, the moderator's full event, the listeners' coalesced room:audience.
        let sixthSocket = try TestWebSocket(app, name: "listener6")
        let reply = try sixthSocket.join(room)
        let sixth = try #require(reply["member_id"] as? String)
        #expect(reply["presence"] as? String == "summary")
        #expect(reply["audience_count"] as? Int == 6)
        #expect(members(reply).count == 7)
        #expect(reply["audience_cursor"] == nil)
        _ = try alice.next(where: isEvent("member:joined", about: sixth))
        let audience = body(try first.next(where: isEvent("room:audience", about: nil)))
        #expect((audience["joined"] as? [[String: Any]])?.compactMap { $0["member_id"] as? String } == [sixth])
        #expect(audience["count"] as? Int == 6)
        try first.sync()
        #expect(!first.log.contains(where: isEvent("member:joined", about: sixth)), "a listener's join reached a listener")

        // A resume behind more presence events than the server replays in such a room: lost, membership kept.
        let second = listeners[1].socket
        try second.sync()
        let seen = try #require(second.lastEventIDs[room])
        second.drop()
        var extras: [(socket: TestWebSocket, member: String)] = []
        for index in 1...4 { extras.append(try listener(app, "extra\(index)", room)) }
        let back = try TestWebSocket(port: app.port, token: try token(app, "listener2"))
        let resumed = try back.call("session:resume", ["session_id": second.sessionID, "last_event_ids": [room: seen]])
        #expect(resumed["lost"] as? [String] == [room])
        #expect(resumed["lost_reasons"] as? [String: String] == [room: "presence-summarised"])
        let rejoined = try back.join(room)
        #expect(rejoined["member_id"] as? String == listeners[1].member)
        #expect(rejoined["presence"] as? String == "summary")

        // Back below 90 % of the limit: the pending room:audience, then room:presence full, then every leave again.
        for leaver in extras.map(\.socket) + [sixthSocket, fifth.socket, listeners[3].socket] { _ = try leaver.call("conversation:leave", ["cid": room]) }
        let full = try first.next(where: isEvent("room:presence", about: nil))
        #expect(body(full)["mode"] as? String == "full")
        #expect(body(full)["count"] as? Int == 4)
        _ = try listeners[2].socket.call("conversation:leave", ["cid": room])
        _ = try first.next(where: isEvent("member:left", about: listeners[2].member))

        // An audience larger than a page: the reply's first 24, the rest through conversation:members by role.
        var crowd: [String] = []
        for index in 1...101 { crowd.append(try listener(app, "crowd\(index)", room).member) }
        let late = try TestWebSocket(app, name: "late")
        let lateReply = try late.join(room)
        #expect(lateReply["audience_count"] as? Int == 104)
        #expect(members(lateReply).count == 26, "alice, the first page of 24 listeners and the joiner")
        let cursor = try #require(lateReply["audience_cursor"] as? String)
        let rest = try late.call("conversation:members", ["cid": room, "role": "listener", "cursor": cursor])
        let lateMember = try #require(lateReply["member_id"] as? String)
        #expect(members(rest).compactMap { $0["member_id"] as? String } == Array(crowd.suffix(79)) + [lateMember])
        #expect(rest["cursor"] == nil)
        let overREST = try http(app, "GET", "/rooms/\(room)/members?role=listener&cursor=\(cursor)", token: aliceToken)
        #expect(members(overREST.object).compactMap { $0["member_id"] as? String } == Array(crowd.suffix(79)) + [lateMember])
        #expect(try http(app, "GET", "/rooms/\(room)/members?role=listener&state=LEFT", token: aliceToken).status == 400)
        #expect(errorCode(try late.request("conversation:members", ["cid": room, "role": "audience"])) == "request:error:invalid-field")
    }

    private static func configure(_ configuration: inout AppConfiguration) {
        configuration.rooms.fullPresenceLimit = 5
        configuration.rooms.audienceUpdateInterval = .milliseconds(100)
        configuration.rooms.maxResumedPresenceEvents = 3
        configuration.rooms.gracePeriod = .seconds(120)
    }

    @Test func onSQLite() throws {
        try withServer(Self.configure) { try Self.bigStageRoom($0) }
    }

    @Test func onPostgreSQL() throws {
        let url = try TestPostgres.shared().makeDatabase()
        try withServer({ configuration in
            Self.configure(&configuration)
            configuration.databasePath = url.string
            configuration.jwtSecret = nil
            configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
        }) { try Self.bigStageRoom($0) }
    }

    /// Two nodes on one PostgreSQL database: each delivers by the room's mode to its own connections.
    @Test func onTwoNodes() throws { try Self.twoNodes() }

    static func twoNodes() throws {
        let url = try TestPostgres.shared().makeDatabase()
        let nodes = try (0..<2).map { _ in try ClusterTests.node(url) { Self.configure(&$0) } }
        defer { nodes.forEach { $0.shutdown() } }
        let aliceToken = try token(nodes[0], "alice")
        let created = try http(nodes[0], "POST", "/rooms", json: #"{"display_name":"Town hall","properties":{"mode":"stage"}}"#, token: aliceToken)
        let room = try #require(created.object["id"] as? String)
        let alice = try TestWebSocket(port: nodes[0].port, token: aliceToken)
        _ = try alice.join(room)
        let bob = try TestWebSocket(nodes[1], name: "bob")
        _ = try bob.join(room)
        var crowd: [TestWebSocket] = []
        for index in 1...4 { crowd.append(try listener(nodes[0], "crowd\(index)", room).socket) }
        // Node 1 switches as its copy of the room crosses the limit.
        #expect(body(try bob.next(where: isEvent("room:presence", about: nil)))["mode"] as? String == "summary")

        // A listener joins on node 0: the moderator there gets it in full, bob on node 1 as room:audience.
        let late = try listener(nodes[0], "late", room)
        _ = try alice.next(where: isEvent("member:joined", about: late.member))
        let audience = body(try bob.next(where: isEvent("room:audience", about: nil)))
        #expect((audience["joined"] as? [[String: Any]])?.compactMap { $0["member_id"] as? String } == [late.member])
        // A listener joins on node 1: the moderator on node 0 gets it in full.
        let carol = try listener(nodes[1], "carol", room)
        _ = try alice.next(where: isEvent("member:joined", about: carol.member))
        // crowd1 on node 0 gets carol's join (on node 1) in a room:audience.
        let next = body(try crowd[0].next { message in
            message["type"] as? String == "room:audience"
                && ((body(message)["joined"] as? [[String: Any]]) ?? []).contains { $0["member_id"] as? String == carol.member }
        })
        #expect(next["count"] as? Int == 7, "bob, four of the crowd, late and carol")
        try bob.sync()
        #expect(!bob.log.contains(where: isEvent("member:joined", about: late.member)))
    }

    @Test func theOptionsParseWithTheirDefaults() throws {
        let defaults = try AppConfiguration.parse(arguments: [], environment: [:]).rooms
        #expect(defaults.fullPresenceLimit == 200)
        #expect(defaults.audienceUpdateInterval == .seconds(1))
        #expect(defaults.maxAudience == 10_000)
        #expect(defaults.maxMembersPerRoom == 1_000)
        let set = try AppConfiguration.parse(arguments: ["--full-presence-limit", "5", "--audience-update-interval", "0.25",
                                                         "--max-audience", "500"], environment: [:]).rooms
        #expect(set.fullPresenceLimit == 5)
        #expect(set.audienceUpdateInterval == .milliseconds(250))
        #expect(set.maxAudience == 500)
        #expect(throws: ConfigurationError.self) { _ = try AppConfiguration.parse(arguments: ["--full-presence-limit", "0"], environment: [:]) }
    }
}
