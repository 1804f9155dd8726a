import ParlorLoop

extension AppConfiguration {
    /// A resume's replay and the stored history it reads (issue 34): pages, their budget and how long an unread
    /// page may wait.
    static let replayOptions: [ConfigurationOption] = [
        option("--max-room-events", "PARLOR_MAX_ROOM_EVENTS", "100000", "events of history kept per room: each new event past it deletes the oldest (a resume from before the oldest kept gets lost with reason history-pruned)") {
            $0.rooms.maxRoomEvents = try int($1, "--max-room-events", 1...1_000_000_000)
        },
        option("--replay-page-bytes", "PARLOR_REPLAY_PAGE_BYTES", "65536", "a session:resume's missed events are read from the database and sent in pages of at most this many bytes, the next once the client has read the last (per connection)") {
            $0.rooms.replayPageBytes = try int($1, "--replay-page-bytes", 4096...(16 << 20))
        },
        option("--replay-budget-bytes", "PARLOR_REPLAY_BUDGET_BYTES", "67108864", "bytes of replay pages held at once across all connections; over it, a resume's replay waits for others to be read") {
            $0.rooms.replayBudgetBytes = try int($1, "--replay-budget-bytes", 65536...(1 << 34))
        },
        option("--replay-stall-timeout", "PARLOR_REPLAY_STALL_TIMEOUT", "30", "seconds a client may leave a replay page unread before it is closed with 1008 (slow consumer)") {
            $0.rooms.replayStallTimeout = .seconds(try seconds($1, "--replay-stall-timeout"))
        },
    ]
}
