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

/// Frames to send after a batch commits, grouped by loop so each loop gets one task per batch, in order.
struct Outbox {
    private var loops: [EventLoop] = []
    private var frames: [ObjectIdentifier: [(ConnectionHandle, [UInt8])]] = [:]

    var isEmpty: Bool { frames.isEmpty }

    mutating func send(_ frame: [UInt8], to handle: ConnectionHandle) {
        let key = ObjectIdentifier(handle.loop)
        if frames[key] == nil { loops.append(handle.loop) }
        frames[key, default: []].append((handle, frame))
    }

    mutating func append(_ other: Outbox) {
        for loop in other.loops {
            for (handle, frame) in other.frames[ObjectIdentifier(loop)] ?? [] { send(frame, to: handle) }
        }
    }

    /// Hands every frame to its connection's loop; each connection writes its own, in the order queued.
    func flush() {
        for loop in loops {
            guard let items = frames[ObjectIdentifier(loop)] else { continue }
            loop.execute {
                for (handle, frame) in items {
                    (handle.resolve()?.handler as? WebSocketConnection)?.send(frame: frame)
                }
            }
        }
    }
}
