import ParlorLoop

/// GET /rooms bodies by page, valid while the rooms service's version is unchanged. The tutorial app and the web
/// client poll this list, so most requests are answered without touching the database or encoding JSON.
final class RoomListCache: Sendable {
    struct Key: Hashable {
        let pageSize: Int
        let cursor: String?
    }

    struct Entry {
        let body: [UInt8]
        let next: String?
    }

    private let state = Locked<(version: UInt64, pages: [Key: Entry])>((0, [:]))

    func entry(_ key: Key, version: UInt64) -> Entry? {
        state.withLock { $0.version == version ? $0.pages[key] : nil }
    }

    func store(_ entry: Entry, for key: Key, version: UInt64) {
        state.withLock { state in
            if state.version != version { state = (version, [:]) }
            // Bounded: only the first pages are requested often; others are recomputed.
            if state.pages.count < 64 { state.pages[key] = entry }
        }
    }
}
