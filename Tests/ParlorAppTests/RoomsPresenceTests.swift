import Foundation
import Testing
import ParlorApp
import ParlorLoop

/// Ghost-free presence: drops after the grace period, resume within it, and recovery after a restart.
@Suite struct RoomsPresenceTests {
    static func shortGrace(_ configuration: inout AppConfiguration) {
        configuration.rooms.gracePeriod = .milliseconds(300)
    }

    @Test func droppedConnectionLeavesAfterGracePeriod() throws {
        try withServer(Self.shortGrace) { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            _ = try alice.join(room)
            let bobMember = try #require(try bob.join(room)["member_id"] as? String)
            let started = Date()
            bob.drop()
            let left = try alice.event("member:left", in: room, member: bobMember)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
            #expect(Date().timeIntervalSince(started) >= 0.25, "the member must keep its place for the grace period")
            #expect(memberNames(try alice.call("conversation:members", ["cid": room])) == ["alice"])
        }
    }

    @Test func resumeWithinGraceKeepsMembershipAndReplaysMissedEvents() throws {
        try withServer(Self.shortGrace) { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            let marker = try TestWebSocket(app, name: "marker")
            _ = try alice.join(room)
            let bobMember = try #require(try bob.join(room)["member_id"] as? String)
            let markerMember = try #require(try marker.join(room)["member_id"] as? String)
            try bob.sync()
            let bobLast = try #require(bob.lastEventIDs[room])
            let bobToken = try token(app, "bob")

            // Bob and the marker drop together; only the marker stays away.
            bob.drop()
            marker.drop()
            let carol = try TestWebSocket(app, name: "carol")
            let carolJoin = try carol.join(room)  // an event Bob misses
            let back = try TestWebSocket(port: app.port, token: bobToken)
            let resumed = try back.call("session:resume", ["session_id": bob.sessionID, "last_event_ids": [room: bobLast]])
            let resumedRooms = resumed["resumed"] as? [[String: Any]] ?? []
            #expect(resumedRooms.first?["member_id"] as? String == bobMember)
            #expect((resumed["lost"] as? [Any])?.isEmpty == true)
            #expect(resumed["session_id"] as? String == back.sessionID)

            // The missed event arrives, in order, right after the reply.
            let missed = try back.event("member:joined", in: room, member: carolJoin["member_id"] as? String)
            #expect(missed["id"] as? Int == bobLast + 1)

            // When the marker's grace period has ended, Bob's has too: he must not have been dropped.
            _ = try alice.event("member:left", in: room, member: markerMember)
            try alice.sync()
            #expect(alice.inbox.contains { ($0["body"] as? [String: Any])?["member_id"] as? String == bobMember && $0["type"] as? String == "member:left" } == false)
            #expect(memberNames(try alice.call("conversation:members", ["cid": room])) == ["alice", "bob", "carol"])
            // And Bob receives live events again.
            _ = try carol.call("conversation:leave", ["cid": room])
            _ = try back.event("member:left", in: room, member: carolJoin["member_id"] as? String)
        }
    }

    @Test func memberDropsOnlyWhenItsLastConnectionIsGone() throws {
        try withServer(Self.shortGrace) { app in
            let room = try createRoom(app)
            let watcher = try TestWebSocket(app, name: "watcher")
            let phone = try TestWebSocket(app, name: "dan")
            let laptop = try TestWebSocket(app, name: "dan")
            let marker = try TestWebSocket(app, name: "marker")
            _ = try watcher.join(room)
            let member = try #require(try phone.join(room)["member_id"] as? String)
            _ = try laptop.join(room)
            let markerMember = try #require(try marker.join(room)["member_id"] as? String)

            phone.drop()
            marker.drop()
            _ = try watcher.event("member:left", in: room, member: markerMember)
            try watcher.sync()
            #expect(memberNames(try watcher.call("conversation:members", ["cid": room])) == ["dan", "watcher"])

            laptop.drop()
            let left = try watcher.event("member:left", in: room, member: member)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
        }
    }

    @Test func restartTreatsJoinedMembersAsDisconnected() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configure: (inout AppConfiguration) -> Void = {
            $0.databasePath = directory.appendingPathComponent("parlor.db").path
            $0.dataDirectory = directory.path
            $0.rooms.gracePeriod = .milliseconds(300)
        }
        var room = ""
        var members: [String: String] = [:]
        try withServer(configure) { app in
            room = try createRoom(app)
            for name in ["amy", "ben"] {
                let client = try TestWebSocket(app, name: name)
                members[name] = try client.join(room)["member_id"] as? String
            }
        }
        try withServer(configure) { app in
            let watcher = try TestWebSocket(app, name: "watcher")
            let joined = try watcher.join(room)
            // Still members during the grace period…
            #expect(memberNames(joined) == ["amy", "ben", "watcher"])
            // …then dropped, with events: no ghosts after a restart.
            for name in ["amy", "ben"] {
                let left = try watcher.event("member:left", in: room, member: members[name])
                #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
            }
            #expect(memberNames(try watcher.call("conversation:members", ["cid": room])) == ["watcher"])
            // Event ids continue from before the restart, without gaps.
            #expect(watcher.eventIDs[room] == [3, 4, 5])
        }
    }

    @Test func resumeAfterRestartWithinGraceKeepsMembership() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configure: (inout AppConfiguration) -> Void = {
            $0.databasePath = directory.appendingPathComponent("parlor.db").path
            $0.dataDirectory = directory.path
            $0.rooms.gracePeriod = .seconds(5)
        }
        var room = ""
        var session = ""
        var last = 0
        var claim = ""
        try withServer(configure) { app in
            room = try createRoom(app)
            let grant = try auth(port: app.port, name: "fay")
            claim = grant.claim
            let client = try TestWebSocket(port: app.port, token: grant.jwt)
            _ = try client.join(room)
            session = client.sessionID
            last = client.lastEventIDs[room] ?? 0
            // Shutdown closes the socket with 1001 and keeps the membership for the next start.
            app.shutdown()
            #expect(try client.closeCode() == 1001)
        }
        try withServer(configure) { app in
            // fay's membership is in live use (its grace period): she proves she is fay with her claim.
            let client = try TestWebSocket(port: app.port, token: try auth(port: app.port, name: "fay", claim: claim).jwt)
            let resumed = try client.call("session:resume", ["session_id": session, "last_event_ids": [room: last]])
            #expect((resumed["resumed"] as? [[String: Any]])?.count == 1)
            let history = try client.call("conversation:events", ["cid": room])
            #expect((history["events"] as? [[String: Any]])?.count == 1, "no member:left was recorded across the restart")
        }
    }
}
