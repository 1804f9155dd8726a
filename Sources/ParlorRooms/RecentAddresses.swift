/// The client addresses each user connected from lately (issue 34, item 12), so a ban of a user who already left
/// still bans the addresses it used. Memory only, on the rooms thread: bounded per user (the newest
/// `maxPerUser`), in age (`maxAge`) and in users (`maxUsers`, the longest silent forgotten first).
struct RecentAddresses {
    static let maxPerUser = 4
    /// A day: long enough to cover a user who left and is banned afterwards, short enough not to ban whoever got
    /// a dynamic address later.
    static let maxAge: Int64 = 86_400_000
    static let maxUsers = 100_000

    private struct Sighting {
        let address: String
        var seenAt: Int64
    }

    private var byUser: [String: [Sighting]] = [:]

    var userCount: Int { byUser.count }

    /// Notes that `userID` connected (or joined) from `address` at `now`.
    mutating func record(_ address: String?, for userID: String, at now: Int64) {
        guard let address else { return }
        var sightings = byUser[userID] ?? []
        if let index = sightings.firstIndex(where: { $0.address == address }) {
            sightings[index].seenAt = now
        } else {
            sightings.append(Sighting(address: address, seenAt: now))
            if sightings.count > Self.maxPerUser, let oldest = sightings.indices.min(by: { sightings[$0].seenAt < sightings[$1].seenAt }) {
                sightings.remove(at: oldest)
            }
        }
        byUser[userID] = sightings
        if byUser.count > Self.maxUsers { forgetOldest(at: now) }
    }

    /// The addresses `userID` was seen at within `maxAge` of `now`, newest first.
    func addresses(of userID: String, at now: Int64) -> [String] {
        (byUser[userID] ?? []).filter { now - $0.seenAt <= Self.maxAge }.sorted { $0.seenAt > $1.seenAt }.map(\.address)
    }

    /// Drops the users seen too long ago, and if that is not enough the longest silent tenth: one sort per tenth
    /// of `maxUsers` sightings of new users.
    private mutating func forgetOldest(at now: Int64) {
        byUser = byUser.filter { _, sightings in sightings.contains { now - $0.seenAt <= Self.maxAge } }
        guard byUser.count > Self.maxUsers else { return }
        let newest = byUser.mapValues { $0.map(\.seenAt).max() ?? 0 }.sorted { $0.value < $1.value }
        for (userID, _) in newest.prefix(byUser.count - Self.maxUsers * 9 / 10) { byUser[userID] = nil }
    }
}
