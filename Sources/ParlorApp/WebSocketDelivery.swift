import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorRooms

/// Where the rooms thread's deliveries end. The rooms domain knows clients by `ClientID`; this knows which WebSocket
/// connection each id stands for, frames each distinct message once (an event goes to every member as one array),
/// and hands each loop its connections' share of a batch in one task.
final class WebSocketDelivery: DeliveryChannel {
    private struct Registry {
        var connections: [ClientID: ConnectionHandle] = [:]
        var lastID: UInt64 = 0
    }

    /// Written by the loops (accept, close), read by the rooms thread once per batch.
    private let registry = Locked(Registry())

    /// A delivery as a connection takes it: the message framed.
    enum Framed: Sendable {
        case frame([UInt8]), pacedFrame([UInt8]), reply([UInt8])
        case replayPageEnd(more: Bool, stallTimeout: TimeSpan?)
        case close(code: UInt16, reason: String)
        case drop
    }

    /// A new id for the WebSocket `handle` just accepted (on its loop): the rooms domain knows the client by it.
    func register(_ handle: ConnectionHandle) -> ClientID {
        registry.withLock { registry in
            registry.lastID += 1
            let id = ClientID(registry.lastID)
            registry.connections[id] = handle
            return id
        }
    }

    /// The connection closed (on its loop): what is delivered to `id` from now on is dropped, as a closed
    /// connection would drop it.
    func unregister(_ id: ClientID) {
        _ = registry.withLock { $0.connections.removeValue(forKey: id) }
    }

    /// On the rooms thread, after a commit: frames, groups by loop, and queues one task per loop.
    func deliver(_ deliveries: [(ClientID, Delivery)]) {
        for group in framedByLoop(deliveries) {
            let items = group.items
            group.loop.execute { Self.write(items) }
        }
    }

    /// The deliveries to registered clients, framed (each distinct message once), in one list per loop in the order
    /// the loops were first used, each list in the order given. Deliveries to ids no longer registered are dropped.
    func framedByLoop(_ deliveries: [(ClientID, Delivery)]) -> [(loop: EventLoop, items: [(ConnectionHandle, Framed)])] {
        // Framed messages by the identity of their bytes: the receivers of one event share one array, so it is
        // framed once and the frame is shared in turn.
        var frames: [UnsafeRawPointer?: [UInt8]] = [:]
        func frame(_ message: [UInt8]) -> [UInt8] {
            let key = message.withUnsafeBytes { $0.baseAddress }
            if let framed = frames[key] { return framed }
            let framed = WebSocketFrameEncoder.frame(.text, payload: message)
            frames[key] = framed
            return framed
        }
        // One list per loop, in the order the loops were first used. A server has a handful of loops, so finding a
        // loop's list is a short scan by identity.
        var groups: [(loop: EventLoop, items: [(ConnectionHandle, Framed)])] = []
        // Only the lookups hold the lock the loops take to register and unregister; the framing comes after.
        let handles = registry.withLock { registry in deliveries.map { registry.connections[$0.0] } }
        for ((_, delivery), handle) in zip(deliveries, handles) {
            guard let handle else { continue }
            let framed: Framed = switch delivery {
            case .message(let message): .frame(frame(message))
            case .pacedMessage(let message): .pacedFrame(frame(message))
            case .reply(let message): .reply(frame(message))
            case .replayPageEnd(let more, let stallTimeout): .replayPageEnd(more: more, stallTimeout: stallTimeout)
            case .close(let code, let reason): .close(code: code, reason: reason)
            case .drop: .drop
            }
            if let index = groups.firstIndex(where: { $0.loop === handle.loop }) {
                groups[index].items.append((handle, framed))
            } else {
                groups.append((handle.loop, [(handle, framed)]))
            }
        }
        return groups
    }

    /// On a connection's loop: frames are queued, then each connection writes once, one writev for all this batch
    /// gave it. A flag on the connection, not a set, marks the ones already listed (no hashing per recipient).
    private static func write(_ deliveries: [(ConnectionHandle, Framed)]) {
        var touched: [WebSocketConnection] = []
        touched.reserveCapacity(deliveries.count)
        for (handle, delivery) in deliveries {
            guard let connection = handle.resolve() else { continue }
            if case .drop = delivery {
                connection.close()
                continue
            }
            guard let socket = connection.handler as? WebSocketConnection else { continue }
            if !socket.awaitsBatchWrite {
                socket.awaitsBatchWrite = true
                touched.append(socket)
            }
            switch delivery {
            case .frame(let frame): socket.send(frame: frame, writeNow: false)
            case .pacedFrame(let frame): socket.sendPaced(frame: frame)
            case .reply(let frame): socket.sendReply(frame: frame, writeNow: false)
            case .replayPageEnd(let more, let stallTimeout): socket.replayPageEnded(more: more, stallTimeout: stallTimeout)
            case .close(let code, let reason):
                // A session taken over: what this connection had not read is the new one's to replay.
                if code == ParlorCloseCode.sessionTakenOver { socket.connection.discardUnsentOutput() }
                socket.writeQueued()
                socket.close(code: code, reason: reason)
            case .drop: break
            }
        }
        for socket in touched {
            socket.awaitsBatchWrite = false
            socket.writeQueued()
        }
    }
}
