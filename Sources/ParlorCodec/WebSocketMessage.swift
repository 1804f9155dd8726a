/// A complete message: data messages are reassembled from their fragments.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// `code` is nil when the close frame had an empty payload.
    case close(code: UInt16?, reason: String)
}
