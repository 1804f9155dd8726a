/// Where the database lives and how `Database` opens it.
public struct DatabaseConfiguration: Sendable {
    /// A file path (its parent directory is created if missing), or `":memory:"` for a private
    /// in-memory database that writes no files at all.
    public var path: String
    /// Read-only connections kept open beside the writer; at least 1. Ignored for `:memory:`.
    public var readerCount: Int
    /// How long a connection waits for another one's lock before failing with `SQLITE_BUSY`.
    public var busyTimeoutMilliseconds: Int32
    /// Applied in id order at open; tests pass their own.
    public var migrations: [Migration]
    /// A WAL with more than this many bytes of frames is checkpointed between two writes and starts over (RESTART),
    /// so the -wal file stays near this size plus about one `checkpointInterval` of writes instead of growing with
    /// load; once writes stop, a file larger than this is truncated.
    public var walTruncateBytes = 4 << 20
    /// Seconds between the background checkpointer's passes.
    public var checkpointInterval = 1.0
    /// False opens the database as it is, for inspecting it (`parlor migrate --status`) without changing it.
    public var appliesMigrations = true
    /// Told before pending migrations run and once they all ran; not called when none is pending.
    public var reportMigrations: (@Sendable (MigrationProgress) -> Void)?

    public init(
        path: String,
        readerCount: Int = 2,
        busyTimeoutMilliseconds: Int32 = 5000,
        migrations: [Migration] = Migrations.embedded
    ) {
        self.path = path
        self.readerCount = readerCount
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.migrations = migrations
    }

    /// True for `:memory:`: one connection, no files, no WAL.
    public var isInMemory: Bool { path == ":memory:" }
}
