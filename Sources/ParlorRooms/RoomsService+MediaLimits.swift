/// Issue 34 item 2: media sessions were bounded only by connections × rooms (16,000 from one identity in 14 s, RSS
/// 33 → 236 MiB). Each new session is counted against its user and its client address.
extension RoomsService {
    /// Throws `media:error:too-many-sessions` when a new session would pass `--max-media-sessions-per-user` or
    /// `--max-media-sessions-per-ip` (0: no limit).
    func checkMediaSessionLimits(user: String, address: String?) throws {
        let perUser = configuration.maxMediaSessionsPerUser
        if perUser > 0, state.mediaSessions.values.count(where: { $0.userID == user }) >= perUser {
            throw RoomError(.mediaTooManySessions, "you already have \(perUser) media sessions open; close one (media:close) first")
        }
        let perAddress = configuration.maxMediaSessionsPerAddress
        if perAddress > 0, let address {
            let key = ClientAddress.limitKey(address)
            if state.mediaSessions.values.count(where: { $0.addressKey == key }) >= perAddress {
                throw RoomError(.mediaTooManySessions, "your address already has \(perAddress) media sessions open")
            }
        }
    }
}
