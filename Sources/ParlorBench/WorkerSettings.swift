import ParlorLoop

/// What every worker is told at start: where the server is and how hard to push it.
struct WorkerSettings {
    /// The server's address, for the connects; host and port also go into the handshake's Host header.
    var address: SocketAddress
    var host: String
    var port: Int
    var namePrefix: String
    var churnRatePerSecond: Double
    var rampConcurrency: Int
    var closeTimeoutSeconds: Double = 5
}
