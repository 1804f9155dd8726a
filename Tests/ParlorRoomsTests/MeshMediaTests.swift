import ParlorProtocol
@testable import ParlorRooms
import Testing

/// Without the forwarding unit (--media mesh), `MediaSessions` refuses media:offer and media:close before it looks
/// at the room, and tells each client that audio goes browser to browser.
@Suite struct MeshMediaTests {
    @Test(arguments: StoreKind.allCases) func offersAndClosesAreRefusedBeforeTheRoomIsLookedUp(_ store: StoreKind) throws {
        let rooms = try RoomsHarness(store)
        defer { rooms.stop() }
        let roomID = try rooms.createRoom()
        let alice = try rooms.connect("alice")
        rooms.request(.join(cid: roomID), from: alice)
        for cid in [roomID, "conv_nowhere"] {
            let offer = rooms.request(.mediaOffer(cid: cid, sdp: "v=0"), from: alice)
            #expect(offer.errorCode == ErrorCode.requestUnknownType.rawValue, "media:offer in \(cid)")
            #expect(offer.body?["detail"]?.stringValue?.hasSuffix("use rtc:* signalling") == true, "\(offer)")
            #expect(rooms.request(.mediaClose(cid: cid), from: alice).errorCode == ErrorCode.requestUnknownType.rawValue,
                    "media:close in \(cid)")
        }
        let service = rooms.service
        #expect(service.thread.submitAndWait { service.rules.mediaJSON } == ["mode": "mesh"])
    }
}
