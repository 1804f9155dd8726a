import ParlorMetrics
import ParlorProtocol

/// Limits per client address inside one room (issue 34, item 6): in open mode one client mints any number of
/// names, each within its own per-member rates, so chat, reactions and (optionally) places in a room are also
/// counted per address (`ClientAddress.limitKey`: an IPv4 address or an IPv6 /64).
struct AddressRates {
    var messages: RateWindow
    var reactions: RateWindow
}

extension RoomsService {
    /// Counts a chat message from `address` into `room`, or refuses it when the address is at its rate.
    func admitMessage(from address: String?, in room: LiveRoom, at now: Int64) throws {
        let limit = configuration.messagesPerAddressPerSecond
        guard limit > 0, let address else { return }
        guard room.admit(address, at: now, \.messages, perSecond: addressRatesPerSecond) else {
            metrics.rateLimited(.chatPerAddress)
            throw RoomError(.messageRateLimited, "at most \(limit) messages a second from your address into this room; wait a moment")
        }
    }

    /// Counts a reaction from `address` into `room`, or refuses it when the address is at its rate.
    func admitReaction(from address: String?, in room: LiveRoom, at now: Int64) throws {
        let limit = configuration.reactionsPerAddressPerSecond
        guard limit > 0, let address else { return }
        guard room.admit(address, at: now, \.reactions, perSecond: addressRatesPerSecond) else {
            metrics.rateLimited(.reactionsPerAddress)
            throw RoomError(.reactionRateLimited, "at most \(limit) reactions a second from your address into this room; wait a moment")
        }
    }

    /// Refuses a new member when the room already has `maxMembersPerAddress` members joined from its address.
    func checkMembersPerAddress(_ caller: Caller, in room: LiveRoom) throws {
        let cap = configuration.maxMembersPerAddress
        guard cap > 0, let address = caller.client.address else { return }
        let fromAddress = room.memberCount(fromAddress: address)
        if fromAddress >= cap {
            metrics.rateLimited(.membersPerAddress)
            throw RoomError(.roomFull, "room \(room.id) already has \(cap) members from your address (--max-members-per-address)")
        }
    }

    private var addressRatesPerSecond: (messages: Int, reactions: Int) {
        (configuration.messagesPerAddressPerSecond, configuration.reactionsPerAddressPerSecond)
    }
}
