import Foundation
import ParlorBasics
import ParlorProtocol
import ParlorRooms

/// The tests' delivery channel: what the Outbox hands each connection after a commit, recorded in order.
final class RecordingChannel: DeliveryChannel, @unchecked Sendable {  // `repliesDelivered` is guarded by `replies`
    private let received = Locked<[ClientID: [Received]]>([:])
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

    func deliver(_ deliveries: [(ClientID, Delivery)]) {
        received.withLock { received in
            for (client, delivery) in deliveries {
                let item: Received
                switch delivery {
                case .message(let message), .pacedMessage(let message): item = .message(Self.decode(message), isReply: false)
                case .reply(let message): item = .message(Self.decode(message), isReply: true)
                case .close(let code, _): item = .close(code: code)
                case .drop: item = .drop
                case .replayPageEnd: continue  // a page of a replay ended: nothing a client sees
                }
                received[client, default: []].append(item)
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

    /// The tids of the replies delivered to `client` since the last `take`, in order (taking everything else too).
    func takeReplyTIDs(_ client: ClientID) -> [String] {
        take(client).compactMap { item -> String? in
            guard case .message(let reply, true) = item else { return nil }
            return reply["tid"]?.stringValue
        }
    }

    /// Everything delivered to `client` since the last call.
    func take(_ client: ClientID) -> [Received] {
        received.withLock { $0.removeValue(forKey: client) ?? [] }
    }

    /// A delivered message's JSON (the domain hands over encoded JSON; framing is the delivery layer's).
    static func decode(_ message: [UInt8]) -> JSONValue {
        (try? JSONParser.parse(message)) ?? .null
    }
}
