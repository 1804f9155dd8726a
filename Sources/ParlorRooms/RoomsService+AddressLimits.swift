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
        guard admit(address, in: room, at: now, \.messages) else {
            metrics.rateLimited(.chatPerAddress)
            throw RoomError(.messageRateLimited, "at most \(limit) messages a second from your address into this room; wait a moment")
        }
    }

    /// Counts a reaction from `address` into `room`, or refuses it when the address is at its rate.
    func admitReaction(from address: String?, in room: LiveRoom, at now: Int64) throws {
        let limit = configuration.reactionsPerAddressPerSecond
        guard limit > 0, let address else { return }
        guard admit(address, in: room, at: now, \.reactions) else {
            metrics.rateLimited(.reactionsPerAddress)
            throw RoomError(.reactionRateLimited, "at most \(limit) reactions a second from your address into this room; wait a moment")
        }
    }

    /// Refuses a new member when the room already has `maxMembersPerAddress` members joined from its address.
    func checkMembersPerAddress(_ caller: Caller, in room: LiveRoom) throws {
        let cap = configuration.maxMembersPerAddress
        guard cap > 0, let address = caller.client.address else { return }
        let fromAddress = room.members.values.lazy.filter { $0.address == address }.count
        if fromAddress >= cap {
            metrics.rateLimited(.membersPerAddress)
            throw RoomError(.roomFull, "room \(room.id) already has \(cap) members from your address (--max-members-per-address)")
        }
    }

    private func admit(_ address: String, in room: LiveRoom, at now: Int64, _ window: WritableKeyPath<AddressRates, RateWindow>) -> Bool {
        assertOnRoomsThread()
        // Addresses that went quiet are forgotten once there are more than the members could need, so the table
        // stays about as large as the room.
        if room.addressRates.count > room.memberCount + 64 {
            room.addressRates = room.addressRates.filter { !$0.value.messages.isIdle(at: now) || !$0.value.reactions.isIdle(at: now) }
        }
        var rates = room.addressRates[address] ?? AddressRates(
            messages: RateWindow(.init(count: configuration.messagesPerAddressPerSecond, milliseconds: 1_000)),
            reactions: RateWindow(.init(count: configuration.reactionsPerAddressPerSecond, milliseconds: 1_000)))
        let admitted = rates[keyPath: window].admit(at: now)
        room.addressRates[address] = rates
        return admitted
    }
}
