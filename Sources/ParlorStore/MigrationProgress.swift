/// What `Database` reports about the migrations it applies when it opens (`DatabaseConfiguration.reportMigrations`):
/// a table rebuild on a large database takes seconds, and a server that waits silently looks hung.
public enum MigrationProgress: Sendable, Equatable {
    /// About to apply these migrations, in this order.
    case applying([String])
    /// Applied them all, in this many seconds.
    case applied([String], seconds: Double)
}

extension Duration {
    /// Seconds as a floating-point number, for reports and logs.
    package var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
