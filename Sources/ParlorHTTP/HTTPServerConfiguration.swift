import ParlorCodec
import ParlorLoop

/// Socket-level settings of the HTTP and WebSocket server.
public struct HTTPServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var loopCount = 0  // 0: one per core
    public var limits = HTTPParserLimits()
    /// A request head must be complete this long after its first byte (slowloris).
    public var headerTimeout = TimeSpan.seconds(10)
    /// A request body must be complete this long after its head (slow bodies).
    public var bodyTimeout = TimeSpan.seconds(30)
    /// A keep-alive connection with no request in progress is closed after this long.
    public var idleTimeout = TimeSpan.seconds(60)
    /// Origins allowed by CORS and on WebSocket upgrades besides the server's own; "*" allows any. Empty: same
    /// origin only.
    public var corsAllowedOrigins: [String] = []
    public var webSocket = WebSocketConfiguration()
    /// Unsent response bytes at which a connection stops answering pipelined requests and stops reading, until
    /// half of them are out (a client that pipelines without reading cannot grow our memory).
    public var maxPendingResponseBytes = 1024 * 1024
    /// Unsent bytes of a streamed response (`HTTPStreamResponse`) at which its client is cut off as a slow reader:
    /// 256 KiB is half a minute of a 64 kbit/s live stream, far past its 2 s of delay.
    public var maxStreamBacklogBytes = 256 * 1024
    /// Open connections from one client address; more are answered 429 and closed. 0: no limit.
    public var maxConnectionsPerIP = 1000
    /// Peers whose Forwarded / X-Forwarded-* headers give the client's address, scheme and host. Their own
    /// connections are capped at `maxConnectionsPerIP × proxyConnectionFactor`; each connection also counts
    /// against the forwarded address of its first request. None by default: any local process (an ssh or socat
    /// tunnel) would otherwise pick its own client address.
    public var trustedProxies = TrustedProxies.none
    public static let proxyConnectionFactor = 64
    /// The names accepted in the Host of WebSocket upgrades and state-changing requests (DNS rebinding): IP
    /// literals always, `localhost`, this machine's name, and what `--public-url` / `--allowed-hosts` add.
    public var allowedHosts = HostAllowlist()
    /// `--public-url`: where people reach the server; its origin is the server's own on `/ws`.
    public var publicURL: PublicURL?
    /// PEM certificate chain and private key: when both are set the server speaks only HTTPS/WSS (TLS 1.2+).
    public var tlsCertificatePath: String?
    public var tlsPrivateKeyPath: String?
    /// The whole stop (`--shutdown-timeout`): in-flight requests get half of it before what is left is closed; the
    /// executable exits when it is over, done or not.
    public var shutdownTimeout = TimeSpan.seconds(5)

    public init() {}
}

public struct WebSocketConfiguration: Sendable {
    public var maxFrameBytes = 64 * 1024
    public var maxMessageBytes = 64 * 1024
    /// The server pings this often, and closes a connection silent for `pongTimeout`.
    public var pingInterval = TimeSpan.seconds(5)
    public var pongTimeout = TimeSpan.seconds(15)
    /// A consumer whose unsent output exceeds this is disconnected with 1008 rather than growing memory.
    public var maxPendingOutputBytes = 1024 * 1024
    /// Paced frames (a resume's replay) wait in a backlog and are handed over as output drains below half of
    /// `maxPendingOutputBytes`; a backlog above this closes the connection with 1008.
    public var maxBacklogBytes = 16 * 1024 * 1024
    /// Frames of any kind a connection may send per second, with a burst of twice that; above it the connection
    /// is closed with 1008 (empty fragments cost us work but no message). 0 turns it off.
    public var framesPerSecond = 200.0

    public init() {}
}
