import ParlorBasics

/// What a batch hands a client: a message's encoded JSON, or a close once the messages before it are out. The same
/// bytes go to every receiver of an event (encoded once); the delivery layer frames them.
public enum Delivery: Sendable {
    case message([UInt8])
    /// Part of a burst the connection paces under its output limit (a resume's replay).
    case pacedMessage([UInt8])
    /// The one answer to a request (success or error), which the connection counts.
    case reply([UInt8])
    /// The end of a page of a resume's replay (ReplayPacer.swift). `more`: messages sent from here on wait
    /// behind the pages still to come; else they go out after this one. `stallTimeout`: once the page drains the
    /// connection asks for the next (`RoomsService.replayNext`), and a peer that does not read it within this time
    /// is closed as a slow consumer; nil: the rooms thread sends the next page itself when the replay budget allows.
    case replayPageEnd(more: Bool, stallTimeout: TimeSpan?)
    /// A close with `code` after the messages queued before it.
    case close(code: UInt16, reason: String)
    /// The connection is cut without a close frame, like a network failure (test mode).
    case drop
}

/// The only way out of the rooms domain: after each commit the Outbox hands the batch's deliveries to the channel.
/// ParlorApp's channel writes them to the WebSocket connections; tests record them.
public protocol DeliveryChannel: Sendable {
    /// Called on the rooms thread, after the commit, once per batch with its deliveries in the order queued.
    func deliver(_ deliveries: [(ClientID, Delivery)])
}

/// Messages to send after a batch commits, in the order queued.
struct Outbox {
    private var items: [(ClientID, Delivery)] = []
    /// Room events queued, one per receiver (parlor_events_delivered_total).
    private(set) var eventCount = 0

    var isEmpty: Bool { items.isEmpty }

    mutating func send(_ message: [UInt8], to clientID: ClientID) {
        items.append((clientID, .message(message)))
    }

    /// A room event (history, media or speaking change): counted as delivered.
    mutating func sendEvent(_ message: [UInt8], to clientID: ClientID) {
        eventCount += 1
        items.append((clientID, .message(message)))
    }

    /// A replayed event, paced by the connection.
    mutating func sendPacedEvent(_ message: [UInt8], to clientID: ClientID) {
        eventCount += 1
        items.append((clientID, .pacedMessage(message)))
    }

    mutating func reply(_ message: [UInt8], to clientID: ClientID) {
        items.append((clientID, .reply(message)))
    }

    mutating func replayPageEnd(to clientID: ClientID, more: Bool, stallTimeout: TimeSpan?) {
        items.append((clientID, .replayPageEnd(more: more, stallTimeout: stallTimeout)))
    }

    mutating func close(_ clientID: ClientID, code: UInt16, reason: String) {
        items.append((clientID, .close(code: code, reason: reason)))
    }

    mutating func drop(_ clientID: ClientID) {
        items.append((clientID, .drop))
    }

    mutating func append(_ other: Outbox) {
        items += other.items
        eventCount += other.eventCount
    }

    /// Hands the batch's deliveries over; each connection writes its own, in the order queued.
    func flush(through channel: any DeliveryChannel) {
        if !items.isEmpty { channel.deliver(items) }
    }
}
