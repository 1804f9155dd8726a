import ParlorLoop

/// What every worker is told at start: where the server is and how hard to push it.
struct WorkerSettings {
    /// The nodes (one per `--url`) and their addresses, by the index `ClientAssignment.node` names.
    var endpoints: [Endpoint]
    var addresses: [SocketAddress]
    var namePrefix: String
    var churnRatePerSecond: Double
    var rampConcurrency: Int
    var closeTimeoutSeconds: Double = 5
}
