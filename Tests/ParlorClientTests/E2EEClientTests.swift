import Foundation
import ParlorApp
import Testing
@testable import ParlorClient

/// ParlorClient's part in end-to-end encrypted rooms (issue 40): the room property, joining with the statement, key
/// messages out and in, and ciphertext chat, against a real server.
@Suite struct E2EEClientTests {
    @Test func anAppTakesPartInAnEncryptedRoom() async throws {
        let (app, server) = try startServer()
        defer { app.shutdown() }
        let room = try await server.createRoom(displayName: "Private", properties: RoomProperties(e2ee: true))
        #expect(room.e2ee)
        #expect(room.properties.e2ee, "read back as created")
        #expect(try await server.room(id: room.id).e2ee)
        #expect(try await server.rooms().first { $0.id == room.id }?.e2ee == true)
        let plain = try await server.createRoom(displayName: "Plain")
        #expect(!plain.e2ee)

        let alice = try await server.session("alice")
        let bob = try await server.session("bob")
        let bobEvents = Collector.consuming(bob.events)
        do {
            _ = try await alice.join(room.id)
            Issue.record("joined an encrypted room without stating encryption")
        } catch {
            #expect(error.code == ParlorError.Code.encryptionRequired)
        }
        let aliceJoin = try await alice.join(room.id, e2ee: true)
        #expect(aliceJoin.e2ee)
        let bobJoin = try await bob.join(room.id, e2ee: true)

        try await alice.sendKey(["v": 1, "public_key": "BFqM", "keys": .array([["to": .string(bobJoin.memberID), "key_id": 1, "wrapped": "i02o"]])], in: room.id)
        let key = try await bobEvents.first("alice's key") { $0.eventType == .e2eeKey }
        #expect(key.from == aliceJoin.memberID)
        #expect(key.id == nil)
        #expect(key.body["public_key"]?.stringValue == "BFqM")
        #expect(key.body["cid"]?.stringValue == room.id)

        let ciphertext = "AQFzZWNyZXQ="
        let id = try await alice.send(ciphertext: ciphertext, in: room.id)
        let message = try await bobEvents.first("alice's ciphertext") { $0.eventType == .messageText }
        #expect(message.id == id)
        #expect(message.ciphertext == ciphertext)
        #expect(message.text == nil)
        #expect(try await bob.events(in: room.id).events.last?.ciphertext == ciphertext, "replayed from history")

        do {
            try await alice.sendKey(["pad": .string(String(repeating: "x", count: 17 * 1024))], in: room.id)
            Issue.record("a key message over 16 KiB was relayed")
        } catch {
            #expect(error.code == ParlorError.Code.keyTooLarge)
        }
        do {
            try await alice.send(message: "hello", in: room.id)
            Issue.record("text in an encrypted room")
        } catch {
            #expect(error.code == ParlorError.Code.encryptionRequired)
        }
        _ = try await alice.join(plain.id)
        do {
            try await alice.send(ciphertext: ciphertext, in: plain.id)
            Issue.record("ciphertext in a normal room")
        } catch {
            #expect(error.code == ParlorError.Code.invalidCiphertext)
        }
        await alice.close()
        await bob.close()
    }
}
