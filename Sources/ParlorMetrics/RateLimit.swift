/// Which limit refused something, the `limit` label of parlor_rate_limited_total.
public enum RateLimit: String, CaseIterable, Sendable {
    /// POST /auth per address (--auth-rate).
    case auth
    /// POST /rooms per address (--room-create-rate).
    case roomCreate = "room_create"
    /// Open rooms per address (--max-rooms-per-ip).
    case roomsPerAddress = "rooms_per_address"
    /// Open rooms per user (--max-rooms-per-user).
    case roomsPerUser = "rooms_per_user"
    /// Open connections per address (--max-connections-per-ip).
    case connections
    /// WebSocket frames per connection (--frame-rate, close 1008).
    case frames
    /// Protocol messages per connection (--message-rate, close 1008).
    case messages
    /// WebSocket clients that do not read their output (--max-output-bytes, close 1008): slow consumers.
    case output
    /// Chat messages into one room per address (--chat-rate-per-address).
    case chatPerAddress = "chat_per_address"
    /// Reactions into one room per address (--reaction-rate-per-address).
    case reactionsPerAddress = "reactions_per_address"
    /// Members of one room per address (--max-members-per-address).
    case membersPerAddress = "members_per_address"
}
