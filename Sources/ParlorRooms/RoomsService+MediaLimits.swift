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

extension RoomsService {
    /// Issue 34 item 9: an offer costs the rooms thread about half a millisecond, and 40 connections offering 50
    /// times a second kept a core busy. Throws `media:error:rate-limited` past `--media-offer-rate` per connection
    /// (bursts of `--media-offer-burst`), or twice both per user.
    func admitOffer(from caller: Caller) throws {
        let rate = configuration.mediaOfferRate, burst = Double(configuration.mediaOfferBurst)
        guard rate > 0 else { return }
        let now = clock.now()
        if state.mediaOfferBuckets.count > 4096 { state.mediaOfferBuckets = state.mediaOfferBuckets.filter { state.clients[$0.key] != nil } }
        if state.mediaOfferUserBuckets.count > 4096 { state.mediaOfferUserBuckets = [:] }  // a full bucket is a fresh one
        var connection = state.mediaOfferBuckets[caller.client.id] ?? OfferBucket(burst: burst, now: now)
        var user = state.mediaOfferUserBuckets[caller.user.id] ?? OfferBucket(burst: 2 * burst, now: now)
        // The user's bucket is only charged when the connection's admits.
        let admitted = connection.take(rate: rate, burst: burst, now: now) && user.take(rate: 2 * rate, burst: 2 * burst, now: now)
        state.mediaOfferBuckets[caller.client.id] = connection
        state.mediaOfferUserBuckets[caller.user.id] = user
        guard admitted else {
            throw RoomError(.mediaRateLimited, "at most \(configuration.mediaOfferBurst) media:offer at once, then \(rate) a second; wait a moment")
        }
    }
}
