import ParlorLoop

/// What a batch hands a connection: a frame, or a close once the frames before it are out.
public enum Delivery: Sendable {
    case frame([UInt8])
    /// Part of a burst the connection paces under its output limit (a resume's replay).
    case pacedFrame([UInt8])
    /// The one answer to a request (success or error), which the connection counts.
    case reply([UInt8])
    /// The end of a page of a resume's replay (RoomsService+Replay.swift). `more`: frames sent from here on wait
    /// behind the pages still to come; else they go out after this one. `stallTimeout`: once the page drains the
    /// connection asks for the next (`RoomsService.replayNext`), and a peer that does not read it within this time
    /// is closed as a slow consumer; nil: the rooms thread sends the next page itself when the replay budget allows.
    case replayPageEnd(more: Bool, stallTimeout: TimeSpan?)
    /// A close frame with `code` after the frames queued before it.
    case close(code: UInt16, reason: String)
    /// The connection is cut without a close frame, like a network failure (test mode).
    case drop
}

/// The only way out of the rooms domain: after each commit the Outbox hands every connection's deliveries to the
/// channel. ParlorApp's channel writes them to the WebSocket connections; tests record them.
public protocol DeliveryChannel: Sendable {
    /// Called on the rooms thread, after the commit, once per loop with that loop's deliveries in the order queued.
    func deliver(_ deliveries: [(ConnectionHandle, Delivery)], on loop: EventLoop)
}

/// Frames to send after a batch commits, grouped by loop so each loop gets one task per batch, in order.
struct Outbox {
    /// One list per loop, in the order the loops were first used. A server has a handful of loops, so finding a
    /// loop's list is a short scan by identity: no hashing per delivery.
    private var groups: [(loop: EventLoop, items: [(ConnectionHandle, Delivery)])] = []
    /// Room events queued, one per receiver (parlor_events_delivered_total).
    private(set) var eventCount = 0

    var isEmpty: Bool { groups.isEmpty }

    mutating func send(_ frame: [UInt8], to handle: ConnectionHandle) {
        add(.frame(frame), to: handle)
    }

    /// A room event (history, media or speaking change): counted as delivered.
    mutating func sendEvent(_ frame: [UInt8], to handle: ConnectionHandle) {
        eventCount += 1
        add(.frame(frame), to: handle)
    }

    /// A replayed event, paced by the connection.
    mutating func sendPacedEvent(_ frame: [UInt8], to handle: ConnectionHandle) {
        eventCount += 1
        add(.pacedFrame(frame), to: handle)
    }

    mutating func reply(_ frame: [UInt8], to handle: ConnectionHandle) {
        add(.reply(frame), to: handle)
    }

    mutating func replayPageEnd(to handle: ConnectionHandle, more: Bool, stallTimeout: TimeSpan?) {
        add(.replayPageEnd(more: more, stallTimeout: stallTimeout), to: handle)
    }

    mutating func close(_ handle: ConnectionHandle, code: UInt16, reason: String) {
        add(.close(code: code, reason: reason), to: handle)
    }

    mutating func drop(_ handle: ConnectionHandle) {
        add(.drop, to: handle)
    }

    private mutating func add(_ delivery: Delivery, to handle: ConnectionHandle) {
        for index in groups.indices where groups[index].loop === handle.loop {
            groups[index].items.append((handle, delivery))
            return
        }
        groups.append((handle.loop, [(handle, delivery)]))
    }

    mutating func append(_ other: Outbox) {
        for group in other.groups {
            for (handle, delivery) in group.items { add(delivery, to: handle) }
        }
        eventCount += other.eventCount
    }

    /// Hands every loop its deliveries; each connection writes its own, in the order queued.
    func flush(through channel: any DeliveryChannel) {
        for group in groups { channel.deliver(group.items, on: group.loop) }
    }
}
