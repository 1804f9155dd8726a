import ParlorMetrics
import ParlorProtocol

/// Limits per client address (issue 34, item 6): in open mode one client mints any number of names, each within its
/// own per-member rates, so open rooms, places in a room (optionally), chat and reactions in a room are also counted
/// per address (`ClientAddress.limitKey`: an IPv4 address or an IPv6 /64). The limits come from the configuration
/// (0: none); a refusal is counted in the metrics. Its state is the rooms' (`LiveRoom.addressRates`), so it is
/// used on the rooms thread only.
struct AddressLimits {
    let messagesPerSecond: Int
    let reactionsPerSecond: Int
    /// `--max-members-per-address`: members joined from one address in one room.
    let membersPerRoom: Int
    /// `--max-rooms-per-ip`: open rooms created from one address.
    let openRooms: Int
    let metrics: ServerMetrics

    init(_ configuration: RoomsConfiguration, metrics: ServerMetrics) {
        messagesPerSecond = configuration.messagesPerAddressPerSecond
        reactionsPerSecond = configuration.reactionsPerAddressPerSecond
        membersPerRoom = configuration.maxMembersPerAddress
        openRooms = configuration.maxRoomsPerAddress
        self.metrics = metrics
    }

    /// Counts a message or reaction from `address` into `room`, or refuses it when the address is at its rate.
    func admit(_ kind: ChatKind, from address: String?, in room: LiveRoom, at now: Int64) throws {
        let limit = kind == .message ? messagesPerSecond : reactionsPerSecond
        guard limit > 0, let address else { return }
        guard room.admit(address, at: now, kind.addressWindow, perSecond: (messagesPerSecond, reactionsPerSecond)) else {
            metrics.rateLimited(kind.perAddressMetric)
            throw RoomError(kind.refusal, "at most \(limit) \(kind.noun) a second from your address into this room; wait a moment")
        }
    }

    /// Refuses a new member when the room already has `membersPerRoom` members joined from its address.
    func checkMembers(from address: String?, in room: LiveRoom) throws {
        guard membersPerRoom > 0, let address else { return }
        if room.memberCount(fromAddress: address) >= membersPerRoom {
            metrics.rateLimited(.membersPerAddress)
            throw RoomError(.roomFull, "room \(room.id) already has \(membersPerRoom) members from your address (--max-members-per-address)")
        }
    }

    /// Refuses a room from an address that already has its share of `rooms` (the open ones).
    func checkOpenRooms<Rooms: Sequence<LiveRoom>>(createdFrom address: String?, among rooms: Rooms) throws {
        guard let address, openRooms > 0 else { return }
        if rooms.lazy.filter({ $0.createdFrom == address }).count >= openRooms {
            metrics.rateLimited(.roomsPerAddress)
            throw RoomError(.roomTooManyRooms,
                            "\(openRooms) open rooms were already created from your address; close one or wait until one expires")
        }
    }
}

/// An address's windows in one room (`LiveRoom.addressRates`).
struct AddressRates {
    var messages: RateWindow
    var reactions: RateWindow
}
