import Testing
import ParlorProtocol
@testable import ParlorRooms

/// `ProtocolMessage.event` writes a stored event's message field by field; its bytes must stay those of the
/// `JSONValue` tree it replaced, with the store's encoded body spliced in or encoded again.
@Suite struct EventFrameTests {
    static let bodies: [JSONValue] = [
        .object([:]),
        ["member_id": "MEM-1", "user": ["id": "USR-1", "name": "bob"]],
        ["text": "quote \" backslash \\ newline \n tab \t control \u{01} é 😀 </script>", "n": 12, "ok": true, "none": .null],
        ["reason": "kicked", "list": [1, 2.5, "x", ["nested": []]]],
    ]

    @Test(arguments: bodies.indices)
    func frameIsTheTreesBytesWithAndWithoutTheEncodedBody(index: Int) throws {
        let body = Self.bodies[index]
        for from in [nil, "MEM-9f\u{7f}"] as [String?] {
            let read = EventRecord(roomID: "RM-\"1", id: Int64(index) * 1_000_003, type: "member:joined", from: from, body: body,
                                   createdAt: 1_764_554_420_251 + Int64(index))
            let appended = EventRecord(roomID: read.roomID, id: read.id, type: read.type, from: from,
                                       encodedBody: body.encoded(), createdAt: read.createdAt)
            let expected = ProtocolMessage.message(read.json)
            #expect(ProtocolMessage.event(read) == expected)
            #expect(ProtocolMessage.event(appended) == expected)
            // An event appended from bytes alone has its tree parsed back when asked (webhooks).
            #expect(appended.body == body)
            #expect(appended.json == read.json)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func whatMembersReceiveIsWhatTheStoreHolds(kind: StoreKind) throws {
        let harness = try RoomsHarness(kind)
        defer { harness.stop() }
        let alice = try harness.connect("alice"), bob = try harness.connect("bob")
        let room = try harness.createRoom(by: alice)
        try harness.joinQuietly([alice], to: room)
        harness.request(.join(cid: room), from: bob)
        let stored = try #require(try harness.storedEvents(room).last)
        // Read back from the row, its body stays the stored text (replays send it without parsing it, issue 34).
        #expect(stored.encodedBody != nil, "read back from the row as its stored text")
        #expect(stored.type == "member:joined")
        // The message spliced from the bytes the store wrote decodes to the event read back from its row.
        #expect(harness.messages(alice) == [stored.json])
    }
}
