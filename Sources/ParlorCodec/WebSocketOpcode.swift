/// Frame opcodes defined by RFC 6455 §5.2; the others are reserved and rejected.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0, text = 1, binary = 2, close = 8, ping = 9, pong = 10

    /// Control frames (close, ping, pong) may appear between the fragments of a data message.
    var isControl: Bool { rawValue & 0x08 != 0 }
}
