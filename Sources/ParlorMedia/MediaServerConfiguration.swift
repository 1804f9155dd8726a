import ParlorLoop
import ParlorSRTP

/// How the media server listens and forwards.
public struct MediaServerConfiguration: Sendable {
    /// Where the UDP socket binds (port 0: a free one).
    public var bind: TransportAddress
    /// The addresses announced as host candidates; their port is replaced by the bound one. Empty: the bound
    /// address itself.
    public var announced: [TransportAddress]
    /// Receive slots per session: at most this many senders reach one client at once.
    public var slots: Int
    /// How long a session may have no usable address (consent expired, or never checked) before it is dropped.
    public var addressGracePeriod: TimeSpan = .seconds(30)
    /// How long a new session may go without any address consenting (ICE never completed) before it is dropped.
    public var setupTimeout: TimeSpan = .seconds(10)
    /// After this many sessions ended, free memory goes back to the system (`malloc_trim`): a burst of sessions
    /// (each with its OpenSSL objects) would otherwise leave the process at its peak size.
    public var trimAfterClosedSessions = 32
    /// Receiver reports to senders, and the slot assignment reconsidered, this often.
    public var reportInterval: TimeSpan = .milliseconds(1000)
    /// Speaking changes and consent checked this often.
    public var tickInterval: TimeSpan = .milliseconds(100)
    /// The SRTP profiles DTLS agrees to, in our order of preference (the first one the browser offers wins).
    public var srtpProfiles = SRTPProtectionProfile.preferenceOrder
    /// Media workers (threads) the sessions are spread over; worker 0 shares the receive loop (`--media-workers`).
    public var workers = 1

    public init(bind: TransportAddress, announced: [TransportAddress] = [], slots: Int = 8) {
        self.bind = bind
        self.announced = announced
        self.slots = slots
    }
}
