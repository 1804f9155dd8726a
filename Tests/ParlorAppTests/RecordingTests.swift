import Foundation
import ParlorApp
import ParlorLoop
import ParlorProtocol
import ParlorRooms
import PostgresTestCluster
import Testing

/// Recordings in the rooms domain (issue 38) over real sockets, on SQLite and on PostgreSQL: who may start, stop,
/// list, download and delete; the room:recording events and the join reply; one at a time; the REST codes; files
/// refused by name; a recording interrupted by a restart. The engine is the real one
/// (MediaRecordingEngine); RecordingAudioTests checks the files' audio.
@Suite struct RecordingTests {
    private func body(_ message: [String: Any]) -> [String: Any] { message["body"] as? [String: Any] ?? [:] }

    /// A stage room alice created (moderator) with bob joined as a listener.
    private func stageRoom(_ app: ParlorApplication) throws -> (room: String, alice: TestWebSocket, bob: TestWebSocket, aliceToken: String) {
        let aliceToken = try token(app, "alice")
        let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Panel","properties":{"mode":"stage"}}"#, token: aliceToken)
        let room = try #require(created.object["id"] as? String)
        let alice = try TestWebSocket(port: app.port, token: aliceToken)
        let bob = try TestWebSocket(app, name: "bob")
        #expect(try alice.join(room)["recording"] is NSNull, "a stage room's join reply says it is not recorded")
        _ = try bob.join(room)
        return (room, alice, bob, aliceToken)
    }

    @Test(arguments: RecordingDatabase.allCases)
    func aModeratorRecordsEveryoneHearsOfItAndOthersAreRefused(_ database: RecordingDatabase) throws {
        try withRecordingServer(database) { app in
            let (room, alice, bob, aliceToken) = try stageRoom(app)
            #expect(errorCode(try bob.request("room:record:start", ["cid": room])) == "member:error:not-allowed")
            let stranger = try TestWebSocket(app, name: "carol")
            #expect(errorCode(try stranger.request("room:record:start", ["cid": room])) == "member:error:not-joined")
            #expect(errorCode(try alice.request("room:record:stop", ["cid": room])) == "room:error:not-recording")

            let started = try alice.call("room:record:start", ["cid": room])
            let recordingID = try #require(started["recording_id"] as? String)
            #expect(recordingID.hasPrefix("REC-"))
            let aliceMember = try #require(alice.lastJoinReplyMember(room))
            for client in [alice, bob] {
                let event = body(try client.event("room:recording", in: room))
                #expect(event["on"] as? Bool == true)
                #expect(event["by"] as? String == aliceMember)
                #expect(event["recording_id"] as? String == recordingID)
            }
            #expect(errorCode(try alice.request("room:record:start", ["cid": room])) == "room:error:recording-active")
            // The engine started writing in the recording's own directory.
            let directory = app.configuration.resolvedRecordingsDirectory + "/" + recordingID
            #expect(FileManager.default.fileExists(atPath: directory + "/manifest.json"))

            // Joining mid-recording: the reply says so at once.
            let dave = try TestWebSocket(app, name: "dave")
            let recording = try #require(try dave.join(room)["recording"] as? [String: Any])
            #expect(recording["recording_id"] as? String == recordingID)
            #expect(recording["by"] as? String == aliceMember)
            #expect(recording["started_at"] is String)

            #expect(errorCode(try bob.request("room:record:stop", ["cid": room])) == "member:error:not-allowed")
            _ = try alice.call("room:record:stop", ["cid": room, "recording_id": recordingID])
            for client in [alice, bob, dave] {
                let event = body(try client.event("room:recording", in: room))
                #expect(event["on"] as? Bool == false)
                #expect(event["reason"] == nil, "stopped by request: no reason")
            }
            #expect(try dave.call("conversation:join", ["cid": room])["recording"] is NSNull)

            // The engine finished it: the row is complete with the manifest's duration and files.
            let listed = try waitForState("complete", room: room, token: aliceToken, app)
            #expect(listed["id"] as? String == recordingID)
            #expect((listed["duration_ms"] as? Int ?? 0) > 0)
            #expect(listed["stop_reason"] as? String == "requested")
            #expect(listed["files"] as? [String] == ["mix.opus", "manifest.json"], "nobody spoke: the mix alone")
            #expect((listed["manifest"] as? [String: Any])?["state"] as? String == "complete")
            // A second recording may start once the first has stopped.
            _ = try alice.call("room:record:start", ["cid": room])
        }
    }

    @Test(arguments: RecordingDatabase.allCases)
    func theRESTRoutesAnswerWithTheirCodes(_ database: RecordingDatabase) throws {
        try withRecordingServer(database) { app in
            let (room, alice, _, aliceToken) = try stageRoom(app)
            let bobToken = try token(app, "bob")
            // Another room's moderator.
            let erinToken = try token(app, "erin")
            let other = try http(app, "POST", "/rooms", json: #"{"display_name":"Other","properties":{"mode":"stage"}}"#, token: erinToken)
            #expect(other.status == 201)
            let admin = recordingAdminToken
            #expect(try http(app, "POST", "/rooms/\(room)/recordings", token: bobToken).status == 403)
            #expect(try http(app, "POST", "/rooms/\(room)/recordings", token: erinToken).status == 403)
            #expect(try http(app, "POST", "/rooms/\(room)/recordings", token: nil).status == 401)
            #expect(try http(app, "POST", "/rooms/RM-nope/recordings", token: aliceToken).status == 404)
            let started = try http(app, "POST", "/rooms/\(room)/recordings", token: aliceToken)
            #expect(started.status == 201)
            #expect(started.object["state"] as? String == "recording")
            let recordingID = try #require(started.object["id"] as? String)
            #expect(body(try alice.event("room:recording", in: room))["by"] is NSNull, "started over REST: by null")
            #expect(try http(app, "POST", "/rooms/\(room)/recordings", token: aliceToken).errorCode == "room:error:recording-active")

            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: aliceToken).array.count == 1)
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: bobToken).status == 403)
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: erinToken).status == 403)
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", headers: ["Authorization": "Bearer \(admin)"]).status == 200)
            #expect(try http(app, "GET", "/recordings/\(recordingID)/manifest.json", token: erinToken).status == 403)
            #expect(try http(app, "GET", "/recordings/\(recordingID)/manifest.json", token: nil).status == 401)
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: nil).status == 401)
            #expect(try http(app, "DELETE", "/recordings/\(recordingID)", token: aliceToken).errorCode == "recording:error:in-progress")
            #expect(try http(app, "DELETE", "/rooms/\(room)/recordings/\(recordingID)", token: bobToken).status == 403)
            #expect(try http(app, "DELETE", "/rooms/\(room)/recordings/REC-nope", token: aliceToken).status == 404)

            let stopped = try http(app, "DELETE", "/rooms/\(room)/recordings/\(recordingID)", headers: ["Authorization": "Bearer \(admin)"])
            #expect(stopped.status == 200)
            _ = try waitForState("complete", room: room, token: aliceToken, app)
            let manifest = try http(app, "GET", "/recordings/\(recordingID)/manifest.json", token: aliceToken)
            #expect(manifest.status == 200)
            #expect(manifest.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(manifest.object["recording_id"] as? String == recordingID)
            let mix = try http(app, "GET", "/recordings/\(recordingID)/mix.opus", token: aliceToken)
            #expect(mix.status == 200)
            #expect(mix.header("Content-Type") == "audio/ogg")
            #expect(try http(app, "GET", "/recordings/\(recordingID)/track-2.opus", token: aliceToken).errorCode == "recording:error:not-found")
            #expect(try http(app, "GET", "/recordings/REC-nope/mix.opus", token: aliceToken).errorCode == "recording:error:not-found")

            // Names other than the recorder's are refused before anything is looked up: traversal included.
            for name in ["passwd", "..", "track-01.opus", "track-.opus", "mix.opus.bak", "..%2F..%2Fparlor.db", "%2e%2e", "manifest.json%00"] {
                let response = try http(app, "GET", "/recordings/\(recordingID)/\(name)", token: aliceToken)
                #expect([400, 404].contains(response.status), "\(name): \(response.status)")
                #expect(response.errorCode != nil, "\(name): a JSON error")
            }
            for path in ["/recordings/\(recordingID)/../../etc/passwd", "/recordings/..%2F..%2Fetc/passwd"] {
                #expect([400, 404].contains(try http(app, "GET", path, token: aliceToken).status), Comment(rawValue: path))
            }

            #expect(try http(app, "DELETE", "/recordings/\(recordingID)", token: bobToken).status == 403)
            #expect(try http(app, "DELETE", "/recordings/\(recordingID)", token: aliceToken).status == 204)
            let directory = app.configuration.resolvedRecordingsDirectory + "/" + recordingID
            #expect(!FileManager.default.fileExists(atPath: directory))
            #expect(try http(app, "GET", "/recordings/\(recordingID)/manifest.json", token: aliceToken).status == 404)
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: aliceToken).array.isEmpty)
        }
    }

    @Test(arguments: RecordingDatabase.allCases)
    func anOpenRoomsCreatorRecordsAndTheRecordingStopsWhenTheRoomEmpties(_ database: RecordingDatabase) throws {
        try withRecordingServer(database, { $0.rooms.recordingsAccess = .members }) { app in
            let aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Chat"}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let alice = try TestWebSocket(port: app.port, token: aliceToken)
            let bob = try TestWebSocket(app, name: "bob")
            #expect(try alice.join(room)["recording"] == nil, "an open room's reply is unchanged while it is not recorded")
            _ = try bob.join(room)
            #expect(errorCode(try bob.request("room:record:start", ["cid": room])) == "member:error:not-allowed")
            let recordingID = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
            _ = try bob.event("room:recording", in: room)
            // --recordings-access members: a current member may list them.
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: try token(app, "bob")).status == 200)
            _ = try bob.call("conversation:leave", ["cid": room])
            _ = try alice.call("conversation:leave", ["cid": room])
            let listed = try waitForState("complete", room: room, token: aliceToken, app)
            #expect(listed["id"] as? String == recordingID)
            #expect(listed["stop_reason"] as? String == "room-empty")
        }
    }

    @Test(arguments: RecordingDatabase.allCases)
    func aRecordingThatStopsByItselfSaysWhyAndAFailedStartIsMarked(_ database: RecordingDatabase) throws {
        // The engine stops it by itself at --max-recording-hours (here half a second).
        try withRecordingServer(database, { $0.rooms.maxRecordingDuration = .milliseconds(500) }) { app in
            let (room, alice, bob, aliceToken) = try stageRoom(app)
            _ = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
            _ = try bob.event("room:recording", in: room)
            let stopped = body(try bob.event("room:recording", in: room))
            #expect(stopped["on"] as? Bool == false)
            #expect(stopped["by"] is NSNull)
            #expect(stopped["reason"] as? String == "max-duration")
            #expect(try waitForState("complete", room: room, token: aliceToken, app)["stop_reason"] as? String == "max-duration")

            // The engine cannot start: the recordings directory is a file, so no recording's directory can be made.
            let root = app.configuration.resolvedRecordingsDirectory
            try? FileManager.default.removeItem(atPath: root)
            #expect(FileManager.default.createFile(atPath: root, contents: Data("not a directory".utf8)))
            let second = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
            #expect(body(try bob.event("room:recording", in: room))["on"] as? Bool == true)
            let failed = body(try bob.event("room:recording", in: room))
            #expect(failed["recording_id"] as? String == second)
            #expect(failed["reason"] as? String == "failed")
            #expect(try waitForState("failed", room: room, token: aliceToken, app)["id"] as? String == second)
        }
    }

    @Test func theRecordingWebhooksFollowARecordingThroughItsLife() throws {
        let receiver = try WebhookReceiver(failFirst: 0)
        defer { receiver.stop() }
        try withRecordingServer(.sqlite, { $0.webhookURLs = ["http://127.0.0.1:\(receiver.port)/hooks"] }) { app in
            let (room, alice, _, _) = try stageRoom(app)
            let recordingID = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
            _ = try alice.call("room:record:stop", ["cid": room])
            let received = try receiver.waitFor(count: 6).filter { $0.event.hasPrefix("recording_") }
            #expect(received.map(\.event) == ["recording_started", "recording_stopped", "recording_ready"])
            for request in received {
                let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
                #expect((json["room"] as? [String: Any])?["id"] as? String == room)
                #expect((json["recording"] as? [String: Any])?["id"] as? String == recordingID)
            }
            let ready = try #require(try JSONSerialization.jsonObject(with: Data(received[2].body)) as? [String: Any])
            #expect((ready["recording"] as? [String: Any])?["state"] as? String == "complete")
        }
    }

    @Test func retentionDeletesOldFinishedRecordingsRowsAndFiles() throws {
        try withRecordingServer(.sqlite, { $0.rooms.recordingRetentionDays = 1 }) { app in
            let (room, alice, _, aliceToken) = try stageRoom(app)
            let old = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
            _ = try alice.call("room:record:stop", ["cid": room])
            _ = try waitForState("complete", room: room, token: aliceToken, app)
            let running = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
            // Both started two days ago; only the finished one may go.
            _ = try app.database.write { try $0.run("UPDATE recordings SET started_at = started_at - 172800000", []) }
            let expired = Locked<Result<JSONValue, RoomError>?>(nil)
            let done = DispatchSemaphore(value: 0)
            app.rooms.perform(.expireRecordings) { result in
                expired.withLock { $0 = result }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
            let directories = try #require(try expired.withLock { $0 }?.get()["directories"]?.arrayValue)
            #expect(directories.compactMap(\.stringValue) == [app.configuration.resolvedRecordingsDirectory + "/" + old])
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: aliceToken).array.map { $0["id"] as? String } == [running])
        }
    }

    @Test func closingARoomStopsItsRecordingAndTheOptionsReachTheEngine() throws {
        let parsed = try AppConfiguration.parse(arguments: ["--max-recording-hours", "2", "--recordings-access", "members",
                                                            "--recording-retention", "30", "--recordings-dir", "/srv/rec"], environment: [:])
        #expect(parsed.rooms.maxRecordingDuration == .seconds(7200))
        #expect(parsed.rooms.recordingsAccess == .members)
        #expect(parsed.rooms.recordingRetentionDays == 30)
        #expect(parsed.resolvedRecordingsDirectory == "/srv/rec")
        #expect(try AppConfiguration.parse(arguments: ["--data-dir", "/var/parlor"], environment: [:]).resolvedRecordingsDirectory
                == "/var/parlor/recordings")
        for bad in [["--recordings-access", "everyone"], ["--max-recording-hours", "-1"], ["--recording-retention", "x"]] {
            #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: bad, environment: [:]) }
        }

        try withRecordingServer(.sqlite, { $0.rooms.maxRecordingDuration = .seconds(7200) }) { app in
            let (room, alice, bob, aliceToken) = try stageRoom(app)
            let recordingID = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
            _ = try bob.event("room:recording", in: room)
            #expect(try http(app, "DELETE", "/rooms/\(room)", headers: ["Authorization": "Bearer \(recordingAdminToken)"]).status < 300)
            let stopped = body(try bob.event("room:recording", in: room))
            #expect(stopped["on"] as? Bool == false)
            #expect(stopped["reason"] as? String == "room-closed")
            let listed = try waitForState("complete", room: room, token: aliceToken, app)
            #expect(listed["id"] as? String == recordingID)
            #expect(listed["stop_reason"] as? String == "room-closed")
        }
    }

    /// The retention timer runs at start: a restart with --recording-retention deletes an old recording's row and
    /// its directory, and keeps a recent one.
    @Test func retentionAtStartRemovesTheOldRecordingsDirectory() throws {
        let directory = NSTemporaryDirectory() + "/parlor-retention-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configure: (inout AppConfiguration) -> Void = {
            $0.databasePath = directory + "/parlor.db"
            $0.dataDirectory = directory
            $0.recordingsDirectory = directory + "/recordings"
        }
        let (room, old, recent, aliceToken) = try withRecordingServer(.sqlite, configure) { app in
            let (room, alice, _, aliceToken) = try stageRoom(app)
            var ids: [String] = []
            for _ in 0..<2 {
                ids.append(try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String))
                _ = try alice.call("room:record:stop", ["cid": room])
                _ = try waitForState("complete", room: room, token: aliceToken, app)
            }
            _ = try app.database.write { try $0.run("UPDATE recordings SET started_at = started_at - 172800000 WHERE id = $1", [.text(ids[0])]) }
            return (room, ids[0], ids[1], aliceToken)
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/recordings/" + old))
        let retaining: (inout AppConfiguration) -> Void = { configuration in
            configure(&configuration)
            configuration.rooms.recordingRetentionDays = 1
        }
        try withRecordingServer(.sqlite, retaining) { (app: ParlorApplication) throws in
            let deadline = Date().addingTimeInterval(10)
            while FileManager.default.fileExists(atPath: directory + "/recordings/" + old), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            #expect(!FileManager.default.fileExists(atPath: directory + "/recordings/" + old))
            #expect(FileManager.default.fileExists(atPath: directory + "/recordings/" + recent + "/manifest.json"))
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: aliceToken).array.map { $0["id"] as? String } == [recent])
        }
    }

    /// A start that fails to be stored (a full disk) leaves no recording behind, in memory or in the record.
    @Test func aStartThatCouldNotBeStoredLeavesNoMark() throws {
        try withRecordingServer(.sqlite) { app in
            let (room, alice, _, aliceToken) = try stageRoom(app)
            try DiskFull.fill(app)
            #expect(errorCode(try alice.request("room:record:start", ["cid": room])) == "server:error:unavailable")
            try DiskFull.free(app)
            let root = app.configuration.resolvedRecordingsDirectory
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).isEmpty, "the engine was not started")
            #expect(try http(app, "GET", "/rooms/\(room)/recordings", token: aliceToken).array.isEmpty)
            let carol = try TestWebSocket(app, name: "carol")
            #expect(try carol.join(room)["recording"] is NSNull)
            _ = try alice.call("room:record:start", ["cid": room])
        }
    }

    @Test func recordingIsRefusedWithoutTheForwardingUnit() throws {
        try withRecordingServer(.sqlite, { $0.rooms.mediaMode = .mesh }) { app in
            let (room, alice, _, _) = try stageRoom(app)
            let reply = try alice.request("room:record:start", ["cid": room])
            #expect(errorCode(reply) == "room:error:recording-unavailable")
            #expect((body(reply)["detail"] as? String)?.contains("--media mesh") == true)
        }
    }

    @Test(arguments: RecordingDatabase.allCases)
    func aRecordingRunningAtARestartIsInterrupted(_ database: RecordingDatabase) throws {
        let directory = NSTemporaryDirectory() + "/parlor-restart-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let databasePath = database == .postgres ? try TestPostgres.shared().makeDatabase().string : directory + "/parlor.db"
        let configure: (inout AppConfiguration) -> Void = {
            $0.databasePath = databasePath
            $0.dataDirectory = directory
            $0.recordingsDirectory = directory + "/recordings"
        }
        let (room, recordingID, aliceToken) = try withRecordingServer(.sqlite, configure) { app in
            let (room, alice, bob, aliceToken) = try stageRoom(app)
            let recordingID = try #require(try alice.call("room:record:start", ["cid": room])["recording_id"] as? String)
            _ = try bob.event("room:recording", in: room)
            // The engine starts a recording after the rooms thread commits it; one that starts after the shutdown
            // began is stopped at once (duration 0, as it should be). Wait until the recorder wrote its first
            // manifest, and let it record a little, so the stop below interrupts a recording that ran.
            let manifest = directory + "/recordings/\(recordingID)/manifest.json"
            let deadline = Date().addingTimeInterval(10)
            while !FileManager.default.fileExists(atPath: manifest), Date() < deadline { usleep(5_000) }
            #expect(FileManager.default.fileExists(atPath: manifest), "the recorder started")
            usleep(50_000)
            return (room, recordingID, aliceToken)
        }
        // The server stopped with the recording running: the engine finished its files (manifest `interrupted`), and the
        // next start hands that manifest to the rooms domain.
        // The same secret on the same database: alice's token is still hers.
        try withRecordingServer(.sqlite, configure) { app in
            let listed = try #require(try http(app, "GET", "/rooms/\(room)/recordings", token: aliceToken).array.first)
            #expect(listed["state"] as? String == "interrupted")
            #expect(listed["stop_reason"] as? String == "interrupted")
            #expect((listed["duration_ms"] as? Int ?? 0) > 0, "the duration from the manifest the stopping server wrote")
            let alice = try TestWebSocket(port: app.port, token: aliceToken)
            #expect(try alice.join(room)["recording"] is NSNull)
            let events = try http(app, "GET", "/rooms/\(room)/events", token: aliceToken)
            let last = try #require((events.object["events"] as? [[String: Any]])?.last { $0["type"] as? String == "room:recording" })
            #expect((last["body"] as? [String: Any])?["reason"] as? String == "interrupted")
            // Its files are still served after the restart (with PostgreSQL the node's id is new: same machine).
            let manifest = try http(app, "GET", "/recordings/\(recordingID)/manifest.json", token: aliceToken)
            #expect(manifest.status == 200)
            #expect(manifest.object["recording_id"] as? String == recordingID)
            #expect(manifest.object["state"] as? String == "interrupted")
            let mix = try http(app, "GET", "/recordings/\(recordingID)/mix.opus", token: aliceToken)
            #expect(mix.status == 200 && mix.body.starts(with: Array("OggS".utf8)))
            _ = try alice.call("room:record:start", ["cid": room])
        }
    }

    /// The room's newest recording once it has reached `state` (the engine finishes on its own time).
    private func waitForState(_ state: String, room: String, token: String, _ app: ParlorApplication) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let listed = try http(app, "GET", "/rooms/\(room)/recordings", token: token).array.first ?? [:]
            if listed["state"] as? String == state { return listed }
            guard Date() < deadline else { throw TestFailure("the recording never became \(state): \(listed)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
