import Foundation
import ParlorApp
import ParlorClient
import Testing

/// Recordings through ParlorClient (the session's requests, `RoomEvent.recording`, the join reply's
/// `Membership.recording`, the REST calls) and through `parlor record start|stop|list|get`.
@Suite struct RecordingClientTests {
    @Test func theClientSurfacesTheRecordingMarkAndItsRequests() async throws {
        try await withRecordingServerAsync { app in
            let anonymous = ParlorServer(host: "127.0.0.1", port: app.port)
            let aliceToken = try await anonymous.auth(name: "alice").jwt
            var server = anonymous
            server.token = aliceToken
            let room = try await server.createRoom(displayName: "Podcast", properties: RoomProperties(mode: .stage))
            let alice = try await server.connect(token: aliceToken)
            let bob = try await anonymous.connect(token: try await anonymous.auth(name: "bob").jwt)
            let bobEvents = bob.events
            let aliceJoin = try await alice.join(room.id)
            #expect(aliceJoin.recording == nil)
            _ = try await bob.join(room.id)

            let recordingID = try await alice.startRecording(room.id)
            let on = try await firstRecordingEvent(bobEvents)
            #expect(on.recordingID == recordingID)
            #expect(on.on)
            #expect(on.by == aliceJoin.memberID)
            let carol = try await anonymous.connect(token: try await anonymous.auth(name: "carol").jwt)
            let carolJoin = try await carol.join(room.id)
            #expect(carolJoin.recording?.recordingID == recordingID)
            #expect(carolJoin.recording?.startedAt != nil)
            do {
                _ = try await bob.startRecording(room.id)
                Issue.record("a listener started a recording")
            } catch {
                #expect((error as? ParlorError)?.code == ErrorCode.memberNotAllowed.rawValue)
            }

            try await alice.stopRecording(room.id)
            let off = try await firstRecordingEvent(bobEvents)
            #expect(!off.on)
            #expect(off.reason == nil)
            let listed = try await server.recordings(roomID: room.id)
            #expect(listed.first?["id"]?.stringValue == recordingID)
            for session in [alice, bob, carol] { await session.close() }
        }
    }

    @Test func theCLIStartsStopsListsAndDownloads() throws {
        try withRecordingServer(.sqlite) { app in
            let server = "http://127.0.0.1:\(app.port)"
            let aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Show","properties":{"mode":"stage"}}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let bob = try TestWebSocket(app, name: "bob")
            _ = try bob.join(room)
            let bobToken = try token(app, "bob")

            #expect(try CLITests.run(["record", "start", room, "--token", bobToken, "--server", server]).status == 1, "a listener may not")
            let started = try CLITests.run(["record", "start", room, "--token", aliceToken, "--server", server])
            #expect(started.status == 0)
            let recordingID = started.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(recordingID.hasPrefix("REC-"))
            #expect((try bob.event("room:recording", in: room)["body"] as? [String: Any])?["recording_id"] as? String == recordingID)
            #expect(try CLITests.run(["record", "stop", room, recordingID, "--admin-token", recordingAdminToken, "--server", server]).status == 0)
            #expect((try bob.event("room:recording", in: room)["body"] as? [String: Any])?["on"] as? Bool == false)

            let listed = try CLITests.run(["record", "list", room, "--json", "--token", aliceToken, "--server", server])
            #expect(listed.status == 0)
            let recordings = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]]
            #expect(recordings?.first?["id"] as? String == recordingID)

            let output = NSTemporaryDirectory() + "/parlor-manifest-\(UUID().uuidString).json"
            defer { try? FileManager.default.removeItem(atPath: output) }
            let got = try CLITests.run(["record", "get", recordingID, "manifest.json", "--output", output, "--token", aliceToken, "--server", server])
            #expect(got.status == 0)
            let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: output))) as? [String: Any]
            #expect(manifest?["recording_id"] as? String == recordingID)
            #expect(try CLITests.run(["record", "get", recordingID, "../../etc/passwd", "--token", aliceToken, "--server", server]).status != 0)
            #expect(try CLITests.run(["record", "get", "REC-nope", "mix.opus", "--token", aliceToken, "--server", server]).status == 3)
            #expect(try CLITests.run(["record", "explode", room, "--server", server]).status == 2)
        }
    }

    @Test func helpListsEveryAcceptedOption() throws {
        try CLITests.expectAcceptedOptions(["record": ["--server", "--token", "--admin-token", "--output", "--dev", "--json"]])
        #expect(try CLITests.run(["--help"]).output.contains("record"))
    }

    /// The next room:recording on `stream`, within 10 s.
    private func firstRecordingEvent(_ stream: AsyncStream<RoomEvent>) async throws -> RecordingStatus {
        try await withThrowingTaskGroup(of: RecordingStatus?.self) { group in
            group.addTask {
                for await event in stream where event.eventType == .roomRecording { return event.recording }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(10))
                throw TestFailure("no room:recording within 10 s")
            }
            defer { group.cancelAll() }
            guard let status = try await group.next() ?? nil else { throw TestFailure("room:recording without a recording") }
            return status
        }
    }

    private func withRecordingServerAsync(_ body: (ParlorApplication) async throws -> Void) async throws {
        var configuration = AppConfiguration.testing()
        configuration.recordingEngine = .mediaRecorder
        configuration.recordingsDirectory = NSTemporaryDirectory() + "/parlor-recordings-\(UUID().uuidString)"
        let app = try buildApplication(configuration)
        do {
            try await body(app)
            app.shutdown()
        } catch {
            app.shutdown()
            throw error
        }
    }
}
