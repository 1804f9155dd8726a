/// A room's mode (`properties.mode`): in an open room everyone may speak; in a stage room only moderators and
/// speakers may, and the audience raises hands.
public enum RoomMode: String, CaseIterable, Sendable {
    case open
    case stage
}

/// What a member may do in a room (`role` in member lists and `member:role` events).
public enum MemberRole: String, CaseIterable, Sendable {
    /// May speak and run the room: roles, hands, mute-all, lock, bans.
    case moderator
    /// May send audio.
    case speaker
    /// Listens; may raise a hand, chat and react.
    case listener

    /// Whether the role may send audio.
    public var maySpeak: Bool { self != .listener }
}
