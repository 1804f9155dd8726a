import Foundation
@testable import ParlorApp
import ParlorMedia
import Testing

/// Issue 36 item 2: with two media workers, sessions of one room are spread over both (the worker with the fewest
/// sessions takes the next one: alice, carol on worker 0; bob, dave on worker 1). A speaker's packet is decrypted once
/// on its own worker, forwarded there, and handed once to the other worker, which forwards it to its own listeners;
/// mutes and stage roles are enforced where the packet enters, so nothing forbidden is handed over.
@Suite(.serialized) struct SFUWorkerTests {
    private static func delta(_ after: [MediaWorkerStatistics], _ before: [MediaWorkerStatistics],
                              _ value: KeyPath<MediaWorkerStatistics, Int>) -> [Int] {
        zip(after, before).map { $0[keyPath: value] - $1[keyPath: value] }
    }

    @Test func everyListenerHearsTheSpeakerOnceDecryptedOnceOnEntry() throws {
        try withServer({ $0.mediaWorkers = 2 }) { app in
            let media = try #require(app.media)
            let harness = try SFUTests.Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let listeners = try ["bob", "carol", "dave"].map { try harness.join(room, $0, speaker: false) }
            for listener in listeners { _ = try SFUTests.slots(listener.socket, room, carrying: alice.member) }
            let before = media.onLoop { $0.workerStatistics }
            let handoffsBefore = app.metrics.mediaPacketsHandedOff.load()
            #expect(before.map(\.sessions) == [2, 2], "four sessions spread over two workers")

            let sent = (1...10).map { SFUTests.payload("alice says \($0)") }
            for payload in sent { try alice.media.send(payload, level: 40) }
            for listener in listeners {
                let received = try listener.media.waitForPacket { $0.payload == sent[9] }
                #expect(received.map(\.payload) == sent, "\(listener.member) did not hear each packet once, in order")
            }
            // A copy sent twice would have come before this one (one path per worker, in order).
            let marker = SFUTests.payload("marker")
            try alice.media.send(marker, level: 40)
            for listener in listeners {
                let received = try listener.media.waitForPacket { $0.payload == marker }
                #expect(received.map(\.payload) == sent + [marker])
            }
            let after = media.onLoop { $0.workerStatistics }
            #expect(Self.delta(after, before, \.decrypted) == [11, 0], "decrypted once, on the speaker's worker")
            #expect(Self.delta(after, before, \.handedOff) == [11, 0], "handed to worker 1 once per packet, not per listener")
            #expect(Self.delta(after, before, \.handoffsReceived) == [0, 11])
            #expect(app.metrics.mediaPacketsHandedOff.load() - handoffsBefore == 11, "parlor_media_handoffs_total")
            #expect(Self.delta(after, before, \.forwarded) == [11, 22], "carol on worker 0; bob and dave on worker 1")
            #expect(alice.media.received.isEmpty)
        }
    }

    @Test func aMutedSpeakerIsDroppedOnEntryAndNeverHandedOver() throws {
        try withServer({ $0.mediaWorkers = 2 }) { app in
            let media = try #require(app.media)
            let harness = try SFUTests.Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.member)

            _ = try alice.socket.call("audio:mute:on", ["cid": room])
            harness.mediaSettled()
            _ = try SFUTests.slots(bob.socket, room, carrying: nil)
            let before = media.onLoop { $0.workerStatistics }
            for index in 1...5 { try alice.media.send(SFUTests.payload("muted \(index)"), level: 20) }
            _ = try alice.socket.call("audio:mute:off", ["cid": room])
            harness.mediaSettled()
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.member)
            let marker = SFUTests.payload("unmuted")
            try alice.media.send(marker, level: 20)
            let received = try bob.media.waitForPacket { $0.payload == marker }
            #expect(received.map(\.payload) == [marker], "a packet sent while muted reached the other worker's listener")
            let after = media.onLoop { $0.workerStatistics }
            #expect(Self.delta(after, before, \.decrypted) == [6, 0])
            #expect(Self.delta(after, before, \.handedOff) == [1, 0], "only the unmuted packet was handed over")
            #expect(Self.delta(after, before, \.dropped)[0] >= 5)
        }
    }

    @Test func aStageListenerWhoSendsReachesNobodyOnEitherWorker() throws {
        try withServer({ $0.mediaWorkers = 2 }) { app in
            let media = try #require(app.media)
            let harness = try SFUTests.Harness(app)
            let aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Stage","properties":{"mode":"stage"}}"#, token: aliceToken)
            let room = try #require(created.object["id"] as? String)
            let alice = try harness.join(room, "alice", speaker: true, socket: try TestWebSocket(port: app.port, token: aliceToken))
            let bob = try harness.join(room, "bob", speaker: false, sends: true)  // worker 1, sends anyway
            let carol = try harness.join(room, "carol", speaker: false)  // worker 0
            let dave = try harness.join(room, "dave", speaker: false)  // worker 1, beside bob
            for listener in [carol, dave] { _ = try SFUTests.slots(listener.socket, room, carrying: alice.member) }
            let before = media.onLoop { $0.workerStatistics }
            #expect(before.map(\.sessions) == [2, 2])

            for index in 1...5 { try bob.media.send(SFUTests.payload("bob \(index)"), level: 10) }
            harness.mediaSettled()
            let marker = SFUTests.payload("alice")
            try alice.media.send(marker, level: 30)
            for listener in [carol, dave] {
                let received = try listener.media.waitForPacket { $0.payload == marker }
                #expect(received.map(\.payload) == [marker], "a stage listener's packet was forwarded to \(listener.member)")
            }
            let after = media.onLoop { $0.workerStatistics }
            #expect(Self.delta(after, before, \.decrypted) == [1, 5], "bob's packets were decrypted on his worker")
            #expect(Self.delta(after, before, \.dropped)[1] >= 5, "and dropped there")
            #expect(Self.delta(after, before, \.handedOff) == [1, 0], "only alice's packet crossed workers")
            #expect(Self.delta(after, before, \.forwarded) == [1, 2], "alice's packet to carol, and to dave and bob (who hears her)")
        }
    }

    @Test func mediaWorkersIsParsedAndChecked() throws {
        let defaults = try AppConfiguration.parse(arguments: [], environment: [:])
        #expect(defaults.mediaWorkers == ProcessInfo.processInfo.activeProcessorCount)
        let three = try AppConfiguration.parse(arguments: ["--media-workers", "3"], environment: [:])
        #expect(try three.mediaServerConfiguration(httpPort: 0).workers == 3)
        #expect(try AppConfiguration.parse(arguments: [], environment: ["PARLOR_MEDIA_WORKERS": "1"]).mediaWorkers == 1)
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--media-workers", "0"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--media-workers", "two"], environment: [:]) }
    }
}
