/// Which end of the connection the codec serves: clients must mask their frames, servers must not.
public enum WebSocketRole: Sendable {
    /// Incoming frames must be masked; unmasked ones are a protocol error (1002).
    case server
    /// Incoming frames must not be masked.
    case client
}
