import ParlorSRTP

/// One client's session on the media port, in one group: its ICE parameters (kept by the server's
/// `ICELiteResponder`), its DTLS association and SRTP contexts, the address its media goes to, its receive slots
/// and what it sends. Owned by its worker's loop thread, like a `Connection` by its loop.
final class MediaSession {
    /// Replaced when the client renegotiates (`update`).
    private(set) var setup: MediaSessionSetup
    /// The receive loop's key for it (`MediaSessionRecord.key`).
    let key: UInt64
    let loudness: SessionLoudness
    let dtls: DTLSTransport
    let openedAt: UInt64
    /// Where its media goes: the address ICE selected; nil before the first check and after consent expired.
    var address: TransportAddress?
    var addressLostAt: UInt64?
    /// Whether an address ever consented: until then the session is still setting up (`setupTimeout`).
    var hadAddress = false
    /// Set once DTLS connected: `outbound` protects what we send it, `inbound` unprotects what it sends.
    var outbound: SRTPSender?
    var inbound: SRTPReceiver?
    var slots: [Slot]
    /// Subscribers on this worker whose slots carry this session, as (session, slot index): the forwarding fan-out.
    var forwardTo: [(session: MediaSession, slot: Int)] = []
    /// Other workers with subscribers of it: each gets every decrypted packet once.
    var handoffTo: [Int] = []
    /// Its member may send and its offer sends (the group's plan): otherwise its packets are dropped on entry.
    var maySend = false
    /// Its group's tap, if any: every packet it may send goes there too (a recording).
    var tap: (any MediaPacketTap)?
    /// Its group's relay to other nodes, if any: every packet it may send is sealed for them into the worker's queue.
    var relay: (any MediaPacketRelay)?
    var speaking = SpeakingDetector()
    /// The statistics of the source it sends, for our receiver reports.
    var reception: RTPReceptionStatistics?
    /// The SSRC our receiver reports to it come from.
    let reportSSRC: UInt32
    var packetsReceived = 0
    var packetsDropped = 0

    struct Slot {
        let mid: String
        var rewriter: RTPRewriter
        /// The key of the sending session the slot carries.
        var source: UInt64?
    }

    init(setup: MediaSessionSetup, key: UInt64, loudness: SessionLoudness, dtls: DTLSTransport, now: UInt64) {
        self.setup = setup
        self.key = key
        self.loudness = loudness
        self.dtls = dtls
        openedAt = now
        slots = setup.slots.map { Slot(mid: $0.mid, rewriter: RTPRewriter(outgoingSSRC: $0.ssrc), source: nil) }
        reportSSRC = MediaServer.randomSSRC()
    }

    /// A renegotiation of the same peer connection: the new directions, extension id, payload type and slots take
    /// effect; a slot whose mid and SSRC stay keeps its rewriter and its sender, so its stream goes on unbroken.
    func update(_ setup: MediaSessionSetup) {
        let old = Dictionary(slots.map { ($0.mid, $0) }, uniquingKeysWith: { first, _ in first })
        self.setup = setup
        slots = setup.slots.map { slot in
            if let kept = old[slot.mid], kept.rewriter.outgoingSSRC == slot.ssrc { return kept }
            return Slot(mid: slot.mid, rewriter: RTPRewriter(outgoingSSRC: slot.ssrc), source: nil)
        }
    }

    var id: UInt64 { setup.id }
    var member: String { setup.member }
}
