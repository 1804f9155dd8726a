import CParlorSystem

/// How many glibc malloc arenas the process may use.
///
/// glibc gives every thread that allocates under contention its own arena, up to 8 per core; each keeps its own free
/// memory, so the rooms thread's bursts of event frames and the loops' per-connection objects were spread over 10
/// arenas holding 33 MB free of 53 MB (malloc_info at 10,000 connections). Two arenas measured 4.6 MiB less peak RSS
/// in the hold-10k shape with CPU per event unchanged (bench/HISTORY.md, session 21). Per-thread caches (tcache) take
/// most small allocations without touching an arena, so two are enough for two loop threads and the rooms thread.
public enum MallocArenas {
    public static let defaultLimit: Int32 = 2

    /// The limit to set, or nil when the environment already chose one (MALLOC_ARENA_MAX or the glibc.malloc.arena_max
    /// tunable): an operator's setting wins.
    public static func limit(environment: [String: String]) -> Int32? {
        if environment["MALLOC_ARENA_MAX"] != nil { return nil }
        if let tunables = environment["GLIBC_TUNABLES"], tunables.contains("glibc.malloc.arena_max") { return nil }
        return defaultLimit
    }

    /// Gives free heap memory back to the system (`malloc_trim`), after a burst of objects that has ended: glibc
    /// otherwise keeps the peak's pages. Costs a walk of the heap: call it after bursts, not per object.
    public static func trim() { _ = parlor_malloc_trim() }

    /// Applies `limit(environment:)`. glibc fixes the arena count the first time a second arena is needed, so this
    /// must run before the process starts threads (first thing in main). Returns the limit set, or nil.
    @discardableResult
    public static func apply(environment: [String: String]) -> Int32? {
        guard let count = limit(environment: environment), parlor_limit_malloc_arenas(count) == 1 else { return nil }
        return count
    }
}
