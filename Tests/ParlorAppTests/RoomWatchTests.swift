#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp

/// conversation:watch: a room's events without a membership (what `parlor watch` holds a WebSocket for).
@Suite struct RoomWatchTests {
    @Test func watcherGetsEveryEventLiveWithoutBecomingAMember() throws {
        try withServer { app in
            let room = try createRoom(app)
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)
            let watcher = try TestWebSocket(app, name: "watcher")
            let watching = try watcher.call("conversation:watch", ["cid": room])
            #expect(watching["cid"] as? String == room)
            #expect(watching["last_event_id"] as? Int == 1, "alice's join is history: conversation:events has it")

            let bob = try TestWebSocket(app, name: "bob")
            _ = try bob.join(room)
            _ = try alice.call("conversation:leave", ["cid": room])
            let joined = try watcher.event("member:joined", in: room)
            let left = try watcher.event("member:left", in: room)
            #expect(joined["id"] as? Int == 2 && left["id"] as? Int == 3, "live ids continue from last_event_id")
            #expect(memberNames(try watcher.call("conversation:members", ["cid": room])) == ["bob"], "the watcher is no member")

            // Unwatched: bob's leave reaches bob's own connection, not the former watcher.
            _ = try watcher.call("conversation:unwatch", ["cid": room])
            _ = try bob.call("conversation:leave", ["cid": room])
            _ = try bob.event("member:left", in: room)
            try watcher.sync()
            #expect(watcher.eventIDs[room] == [2, 3])
        }
    }

    @Test func watchingFollowsVisibilityAndNeedsAnOpenRoom() throws {
        try withServer({ $0.roomVisibility = .members }) { app in
            let room = try createRoom(app)
            let stranger = try TestWebSocket(app, name: "stranger")
            #expect(errorCode(try stranger.request("conversation:watch", ["cid": room])) == "member:error:not-joined")
            #expect(errorCode(try stranger.request("conversation:watch", ["cid": "RM-nope"])) == "room:error:not-found")
            #expect(errorCode(try stranger.request("conversation:watch", [:])) == "request:error:missing-field")
            let member = try TestWebSocket(app, name: "member")
            _ = try member.join(room)
            _ = try member.call("conversation:leave", ["cid": room])
            #expect(try member.call("conversation:watch", ["cid": room])["last_event_id"] as? Int == 2, "a former member may watch")
        }
    }

    @Test func aWatcherThatDisconnectsIsForgotten() throws {
        try withServer { app in
            let room = try createRoom(app)
            let watcher = try TestWebSocket(app, name: "watcher")
            _ = try watcher.call("conversation:watch", ["cid": room])
            watcher.drop()
            // Events after the watcher is gone are delivered to the others as usual, and the server stays well.
            let alice = try TestWebSocket(app, name: "alice")
            _ = try alice.join(room)
            let bob = try TestWebSocket(app, name: "bob")
            _ = try bob.join(room)
            #expect(try alice.event("member:joined", in: room, member: bob.lastJoinReplyMember(room))["id"] as? Int == 2)
            #expect(try http(app, "GET", "/healthz").status == 200)
        }
    }
}

/// `parlor watch` holds a WebSocket: live events without polling, and after the server restarts it watches again and
/// carries on from the last event it printed, each id once.
@Suite struct WatchCommandTests {
    @Test func watchPrintsLiveEventsAndCarriesOnAfterARestart() throws {
        try withTemporaryDirectory { directory in
            var configuration = AppConfiguration.testing()
            configuration.databasePath = directory + "/parlor.db"
            configuration.dataDirectory = directory
            let first = try buildApplication(configuration)
            let port = first.port
            let room = try createRoom(first)
            let alice = try TestWebSocket(first, name: "alice")
            _ = try alice.join(room)
            let watcher = try withTemporaryDirectory {
                try ExecutableTests.Child(["watch", room, "--json", "--since", "start", "--server", "http://127.0.0.1:\(port)"], in: $0)
            }
            func nextEvent() throws -> [String: Any] {
                try JSONSerialization.jsonObject(with: Data(try watcher.readLine().utf8)) as? [String: Any] ?? [:]
            }
            let watching = try nextEvent()
            #expect(watching["type"] as? String == "watching" && watching["after"] as? Int == 0 && watching["last_event_id"] as? Int == 1)
            #expect(try nextEvent()["id"] as? Int == 1, "the history first")
            let bob = try TestWebSocket(first, name: "bob")
            _ = try bob.join(room)
            #expect(try nextEvent()["id"] as? Int == 2, "then live")

            first.shutdown()
            configuration.http.port = port
            let second = try buildApplication(configuration)
            defer { second.shutdown() }
            // A member who joins after the restart: the watcher reconnects, watches again and prints it, once.
            let carol = try TestWebSocket(second, name: "carol")
            _ = try carol.join(room)
            let afterRestart = try nextEvent()
            #expect(afterRestart["id"] as? Int == 3)
            #expect(afterRestart["type"] as? String == "member:joined")
            kill(watcher.process.processIdentifier, SIGTERM)
            #expect(watcher.waitForExit(timeout: 10) == 0)
            #expect(!watcher.remainingOutput().contains(#""id":2,"#), "nothing printed twice")
        }
    }
}
