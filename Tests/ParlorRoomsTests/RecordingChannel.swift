import Foundation
import ParlorProtocol
import ParlorLoop
import ParlorRooms

/// The tests' delivery channel: what the Outbox hands each connection after a commit, recorded in order.
final class RecordingChannel: DeliveryChannel, @unchecked Sendable {  // `repliesDelivered` is guarded by `replies`
    private let received = Locked<[ConnectionHandle: [Received]]>([:])
    /// Replies delivered so far (never reset), for `waitForReplies`.
    private var repliesDelivered = 0
    private let replies = NSCondition()

    /// One delivery as a client would see it.
    enum Received: Sendable {
        /// A text frame's JSON; `isReply` for the answer to a request.
        case message(JSONValue, isReply: Bool)
        case close(code: UInt16)
        case drop
    }

    func deliver(_ deliveries: [(ConnectionHandle, Delivery)], on loop: EventLoop) {
        received.withLock { received in
            for (handle, delivery) in deliveries {
                let item: Received
                switch delivery {
                case .frame(let frame), .pacedFrame(let frame): item = .message(Self.decode(frame), isReply: false)
                case .reply(let frame): item = .message(Self.decode(frame), isReply: true)
                case .close(let code, _): item = .close(code: code)
                case .drop: item = .drop
                case .replayPageEnd: continue  // a page of a replay ended: nothing a client sees
                }
                received[handle, default: []].append(item)
            }
        }
        let count = deliveries.count { if case .reply = $0.1 { true } else { false } }
        guard count > 0 else { return }
        replies.lock()
        repliesDelivered += count
        replies.broadcast()
        replies.unlock()
    }

    /// Waits until `total` replies have been delivered since the channel was made, at most `seconds`; false if
    /// they did not all come.
    func waitForReplies(total: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        replies.lock()
        defer { replies.unlock() }
        while repliesDelivered < total {
            guard replies.wait(until: deadline) else { return repliesDelivered >= total }
        }
        return true
    }

    /// The tids of the replies delivered to `handle` since the last `take`, in order (taking everything else too).
    func takeReplyTIDs(_ handle: ConnectionHandle) -> [String] {
        take(handle).compactMap { item -> String? in
            guard case .message(let reply, true) = item else { return nil }
            return reply["tid"]?.stringValue
        }
    }

    /// Everything delivered to `handle` since the last call.
    func take(_ handle: ConnectionHandle) -> [Received] {
        received.withLock { $0.removeValue(forKey: handle) ?? [] }
    }

    /// The JSON of an unmasked server text frame (the payload length takes 7, 7+16 or 7+64 bits).
    static func decode(_ frame: [UInt8]) -> JSONValue {
        var offset = 2
        switch frame[1] & 0x7F {
        case 126: offset = 4
        case 127: offset = 10
        default: break
        }
        return (try? JSONParser.parse(Array(frame[offset...]))) ?? .null
    }
}
