import ParlorHTTP
import ParlorLoop

/// One WebSocket connection as the rooms domain knows it: where to send, which session, which user.
public struct ClientRef: Sendable, Hashable {
    public let handle: ConnectionHandle
    public let sessionID: String
    public let user: User

    public init(handle: ConnectionHandle, sessionID: String, user: User) {
        self.handle = handle
        self.sessionID = sessionID
        self.user = user
    }

    public static func == (a: ClientRef, b: ClientRef) -> Bool { a.handle == b.handle }
    public func hash(into hasher: inout Hasher) { hasher.combine(handle) }
}

/// What a batch hands a connection: a frame, or a close once the frames before it are out.
enum Delivery: Sendable {
    case frame([UInt8])
    /// Part of a burst the connection paces under its output limit (a resume's replay).
    case pacedFrame([UInt8])
    /// The one answer to a request (success or error), which the connection counts.
    case reply([UInt8])
    case close(code: UInt16, reason: String)
}

/// Frames to send after a batch commits, grouped by loop so each loop gets one task per batch, in order.
struct Outbox {
    private var loops: [EventLoop] = []
    private var items: [ObjectIdentifier: [(ConnectionHandle, Delivery)]] = [:]
    /// Room events queued, one per receiver (parlor_events_delivered_total).
    private(set) var eventCount = 0

    var isEmpty: Bool { items.isEmpty }

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

    mutating func close(_ handle: ConnectionHandle, code: UInt16, reason: String) {
        add(.close(code: code, reason: reason), to: handle)
    }

    private mutating func add(_ delivery: Delivery, to handle: ConnectionHandle) {
        let key = ObjectIdentifier(handle.loop)
        if items[key] == nil { loops.append(handle.loop) }
        items[key, default: []].append((handle, delivery))
    }

    mutating func append(_ other: Outbox) {
        for loop in other.loops {
            for (handle, delivery) in other.items[ObjectIdentifier(loop)] ?? [] { add(delivery, to: handle) }
        }
        eventCount += other.eventCount
    }

    /// Hands every delivery to its connection's loop; each connection writes its own, in the order queued.
    func flush() {
        for loop in loops {
            guard let batch = items[ObjectIdentifier(loop)] else { continue }
            loop.execute {
                // Frames are queued, then each connection writes once: one writev for all this batch gave it.
                var touched: [WebSocketConnection] = []
                var seen = Set<ObjectIdentifier>()
                for (handle, delivery) in batch {
                    guard let socket = handle.resolve()?.handler as? WebSocketConnection else { continue }
                    if seen.insert(ObjectIdentifier(socket)).inserted { touched.append(socket) }
                    switch delivery {
                    case .frame(let frame): socket.send(frame: frame, writeNow: false)
                    case .pacedFrame(let frame): socket.sendPaced(frame: frame)
                    case .reply(let frame): socket.sendReply(frame: frame, writeNow: false)
                    case .close(let code, let reason):
                        socket.writeQueued()
                        socket.close(code: code, reason: reason)
                    }
                }
                for socket in touched { socket.writeQueued() }
            }
        }
    }
}
