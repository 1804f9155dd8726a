/// The media links' counters (issue 41): datagrams sealed and sent to other nodes, opened from them, dropped by
/// reason, and peers' link offers refused by reason. Reasons are fixed words, so each counter's label set is closed.
public final class MediaLinkCounters: Sendable {
    /// Why a received link datagram was dropped: ParlorMediaLink's `MediaLinkOpenError.counterLabel` words, and
    /// `unknown_epoch` (no link has that epoch: no valid offer of the sender, or not looked up yet).
    public static let dropReasons = ["malformed", "wrong_epoch", "replayed", "too_old", "forged", "openssl", "unknown_epoch"]
    /// Why a packet was not sent: no link to the node, or a field the packet format refuses (`MediaLinkSealError`).
    public static let unsentReasons = ["no_link", "unsealable"]
    /// Why a peer's offer was refused (`LinkOfferError` and key derivation).
    public static let offerRefusalReasons = ["bad_signature", "stale", "future", "malformed", "bad_key", "bad_address"]

    public let sent = MetricCell()
    public let received = MetricCell()
    /// Links keyed now, and links torn down because no room needed them (issue 41: links exist on demand).
    public let links = MetricCell()
    public let tornDown = MetricCell()
    private let dropped: [String: MetricCell]
    private let unsent: [String: MetricCell]
    private let refusedOffers: [String: MetricCell]

    public init() {
        dropped = Dictionary(uniqueKeysWithValues: Self.dropReasons.map { ($0, MetricCell()) })
        unsent = Dictionary(uniqueKeysWithValues: Self.unsentReasons.map { ($0, MetricCell()) })
        refusedOffers = Dictionary(uniqueKeysWithValues: Self.offerRefusalReasons.map { ($0, MetricCell()) })
    }

    public func dropped(_ reason: String) { dropped[reason]?.add() }
    public func droppedCount(_ reason: String) -> Int { dropped[reason]?.load() ?? 0 }
    public func unsent(_ reason: String) { unsent[reason]?.add() }
    public func unsentCount(_ reason: String) -> Int { unsent[reason]?.load() ?? 0 }
    public func refusedOffer(_ reason: String) { refusedOffers[reason]?.add() }
    public func refusedOfferCount(_ reason: String) -> Int { refusedOffers[reason]?.load() ?? 0 }

    func write(into out: inout MetricsText) {
        out.single("parlor_media_link_packets_sent_total", "counter", "Media link datagrams sealed and sent to other nodes", sent.load())
        out.single("parlor_media_link_packets_received_total", "counter", "Media link datagrams from other nodes that authenticated and were handed on",
                   received.load())
        out.single("parlor_media_links", "gauge", "Media links to other nodes keyed now", links.load())
        out.single("parlor_media_links_torn_down_total", "counter", "Media links torn down because no room needed them for a while",
                   tornDown.load())
        out.family("parlor_media_link_packets_dropped_total", "counter", "Media link datagrams received and dropped, by reason")
        for reason in Self.dropReasons { out.sample("parlor_media_link_packets_dropped_total", droppedCount(reason), labels: [("reason", reason)]) }
        out.family("parlor_media_link_packets_unsent_total", "counter", "Packets for other nodes not sent, by reason")
        for reason in Self.unsentReasons { out.sample("parlor_media_link_packets_unsent_total", unsentCount(reason), labels: [("reason", reason)]) }
        out.family("parlor_media_link_offers_refused_total", "counter", "Other nodes' link offers read from the database and refused, by reason")
        for reason in Self.offerRefusalReasons {
            out.sample("parlor_media_link_offers_refused_total", refusedOfferCount(reason), labels: [("reason", reason)])
        }
    }
}
