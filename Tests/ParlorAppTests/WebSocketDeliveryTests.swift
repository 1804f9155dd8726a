import ParlorCodec
@testable import ParlorApp
@testable import ParlorLoop
import ParlorRooms
import Testing

/// The delivery layer between the rooms domain's `ClientID`s and the WebSocket connections: each distinct message
/// framed once and shared, one list per loop in the order decided, nothing for a client no longer registered.
@Suite struct WebSocketDeliveryTests {
    @Test func eachMessageIsFramedOnceAndGroupedByLoop() throws {
        let (first, second) = (try EventLoop(name: "delivery-test-1"), try EventLoop(name: "delivery-test-2"))
        let delivery = WebSocketDelivery()
        let aliceHandle = ConnectionHandle(loop: first, fd: 10, registrationID: 1)
        let bobHandle = ConnectionHandle(loop: second, fd: 11, registrationID: 1)
        let alice = delivery.register(aliceHandle)
        let bob = delivery.register(bobHandle)
        let carol = delivery.register(ConnectionHandle(loop: first, fd: 12, registrationID: 1))
        #expect(Set([alice, bob, carol]).count == 3)
        delivery.unregister(carol)

        let event = Array(#"{"type":"member:joined","cid":"RM-1"}"#.utf8)
        let reply = Array(#"{"type":"session:ping:success","tid":"t1","body":{}}"#.utf8)
        let groups = delivery.framedByLoop([
            (alice, .message(event)), (bob, .message(event)), (carol, .message(event)),
            (alice, .reply(reply)), (alice, .close(code: 1000, reason: "bye")),
        ])

        #expect(groups.count == 2)
        #expect(groups.first?.loop === first && groups.last?.loop === second)
        let aliceItems = try #require(groups.first?.items)
        let bobItems = try #require(groups.last?.items)
        #expect(aliceItems.map(\.0) == [aliceHandle, aliceHandle, aliceHandle])
        #expect(bobItems.map(\.0) == [bobHandle])
        guard case .frame(let aliceFrame) = aliceItems[0].1, case .reply(let replyFrame) = aliceItems[1].1,
              case .close(let code, _) = aliceItems[2].1, case .frame(let bobFrame) = bobItems[0].1 else {
            Issue.record("unexpected deliveries: \(aliceItems.map(\.1)), \(bobItems.map(\.1))")
            return
        }
        #expect(aliceFrame == WebSocketFrameEncoder.frame(.text, payload: event))
        #expect(replyFrame == WebSocketFrameEncoder.frame(.text, payload: reply))
        #expect(code == 1000)
        // One frame for both receivers: the same storage, not an equal copy.
        let aliceBytes = aliceFrame.withUnsafeBytes { $0.baseAddress }
        let bobBytes = bobFrame.withUnsafeBytes { $0.baseAddress }
        #expect(aliceBytes == bobBytes)
    }
}
