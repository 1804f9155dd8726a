/// Timeouts, limits and the reconnect policy of a `ParlorServer` and the sessions it opens.
public struct ParlorClientConfiguration: Sendable {
    /// Resolving, connecting and the WebSocket upgrade (each reconnect attempt too).
    public var connectTimeout: Duration = .seconds(10)
    /// How long an HTTP call or a WebSocket request waits for its reply.
    public var requestTimeout: Duration = .seconds(15)
    /// A WebSocket that receives nothing at all for this long is presumed dead and reconnected. The server pings
    /// every 5 seconds by default, so anything comfortably above its ping interval works; nil turns this off.
    public var idleTimeout: Duration? = .seconds(20)
    /// Largest WebSocket message accepted from the server (a join reply lists every member of the room).
    public var maxMessageBytes = 16 << 20
    public var reconnect = ReconnectPolicy()
    /// Which certificates an https:// or wss:// server may present (the system's CA store unless set).
    public var tls = TLSTrust()

    public init() {}
}

/// The certificate authorities an https:// or wss:// server's certificate must chain to. The certificate must also
/// name the host connected to (a DNS name, or an IP address for a URL with one). Verification is always on.
///
/// With neither `caFile` nor `caPEM`, the system's CA store decides (on Linux, OpenSSL's default paths, e.g.
/// /etc/ssl/certs). With either, only the certificates given are trusted, as curl's `--cacert` does: for a LAN server
/// with a self-signed certificate, pass that certificate (`parlor serve --tls-self-signed` writes it to
/// `tls-cert.pem` in its data directory).
public struct TLSTrust: Sendable, Hashable {
    /// A PEM file with one or more CA (or self-signed) certificates.
    public var caFile: String?
    /// PEM text with one or more certificates, for apps that carry the certificate rather than a file.
    public var caPEM: [UInt8]?

    public init(caFile: String? = nil, caPEM: [UInt8]? = nil) {
        self.caFile = caFile
        self.caPEM = caPEM
    }

    /// Whether the system's CA store is used (no custom CA given).
    public var usesSystemStore: Bool { caFile == nil && caPEM == nil }
}

/// How a session reconnects after its connection drops unexpectedly.
///
/// Attempt n waits `min(initialDelay × multiplier^(n-1), maxDelay)`, scaled by a random factor in
/// `1 - jitter ... 1`, before connecting. After `maxAttempts` failures in a row the session closes with
/// `client:error:reconnect-failed`. Keep the total well under the server's grace period (20 s by default), or
/// the server ends the memberships (`member:left`, reason `dropped`) and `resume` reports the rooms as lost.
public struct ReconnectPolicy: Sendable {
    /// 0 disables reconnecting: a drop closes the session.
    public var maxAttempts = 6
    public var initialDelay: Duration = .milliseconds(250)
    public var maxDelay: Duration = .seconds(4)
    public var multiplier = 2.0
    /// 0...1: the share of each delay that is randomized, so many clients do not reconnect in lockstep.
    public var jitter = 0.2

    public init() {}

    public init(maxAttempts: Int, initialDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(4),
                multiplier: Double = 2.0, jitter: Double = 0.2) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.multiplier = multiplier
        self.jitter = jitter
    }

    public static let disabled = ReconnectPolicy(maxAttempts: 0)

    /// The wait before attempt `attempt` (1-based).
    public func delay(beforeAttempt attempt: Int) -> Duration {
        let base = initialDelay.seconds * pow(multiplier, Double(max(attempt - 1, 0)))
        let capped = min(base, maxDelay.seconds)
        let spread = min(max(jitter, 0), 1)
        let factor = spread > 0 ? Double.random(in: (1 - spread)...1) : 1
        return .milliseconds(Int64(capped * factor * 1000))
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(min(exponent, 64)) { result *= base }
        return result
    }
}
