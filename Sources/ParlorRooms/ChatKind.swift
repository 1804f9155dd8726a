import ParlorMetrics
import ParlorProtocol

/// A chat message or a reaction: what a member sends into a room within its own rate (StageRules) and its
/// address's rate in the room (AddressLimits). The two differ only in their windows, limits and words, so each
/// check is written once over this.
enum ChatKind {
    case message
    case reaction

    /// The member's own window (`StageRules.messageRate` / `reactionRate`).
    var memberWindow: WritableKeyPath<LiveMember, RateWindow> {
        switch self {
        case .message: \.messageWindow
        case .reaction: \.reactionWindow
        }
    }

    /// The address's window in the room.
    var addressWindow: WritableKeyPath<AddressRates, RateWindow> {
        switch self {
        case .message: \.messages
        case .reaction: \.reactions
        }
    }

    var memberRate: RateWindow.Limit {
        switch self {
        case .message: StageRules.messageRate
        case .reaction: StageRules.reactionRate
        }
    }

    var refusal: ErrorCode {
        switch self {
        case .message: .messageRateLimited
        case .reaction: .reactionRateLimited
        }
    }

    var perAddressMetric: RateLimit {
        switch self {
        case .message: .chatPerAddress
        case .reaction: .reactionsPerAddress
        }
    }

    /// The plural noun in a refusal.
    var noun: String {
        switch self {
        case .message: "messages"
        case .reaction: "reactions"
        }
    }
}
