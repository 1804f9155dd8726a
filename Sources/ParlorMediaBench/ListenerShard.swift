import ParlorLoop
import ParlorMedia
import ParlorMediaClient

/// The listeners (and speakers' receive side) of one generator loop: their peers, and what they received inside the
/// measured window: packets per member and a latency histogram per node the members joined. Loop-thread state; the main thread reads it through
/// `submitAndWait`.
final class ListenerShard: @unchecked Sendable {  // every field is touched only on `loop`
    let loop: EventLoop
    private(set) var peers: [MediaPeer] = []
    /// The window: ticks (payload sequences) counted, [from, to).
    private var window: Range<UInt32> = 0..<0
    private var counts: [Int] = []
    /// Each peer's node (index into the bench's --url list), and a histogram per node.
    private var nodes: [Int] = []
    private var histograms: [LatencyHistogram]
    /// Packets outside any payload we sent, or undecodable: should stay 0.
    private var foreign = 0
    /// Every probe packet received, whatever its sequence: the forwarding rate while the server is behind.
    private var arrivals = 0

    init(index: Int, nodes: Int = 1) throws {
        histograms = Array(repeating: LatencyHistogram(), count: nodes)
        loop = try EventLoop(name: "media-bench-rx-\(index)")
        loop.start()
    }

    /// Adds a peer (of node `node`) on this loop and returns its index in the shard. Loop thread.
    func add(_ peer: MediaPeer, node: Int = 0) -> Int {
        loop.assertInLoop()
        let index = peers.count
        peers.append(peer)
        counts.append(0)
        nodes.append(node)
        peer.received = { [unowned self] header, packet in record(index, header, packet) }
        return index
    }

    private func record(_ index: Int, _ header: RTPHeader, _ packet: [UInt8]) {
        let now = MonotonicClock.now()
        guard let payload = ProbePayload(packet, in: header.payloadRange) else { foreign += 1; return }
        arrivals += 1
        guard window.contains(payload.sequence) else { return }
        counts[index] += 1
        histograms[nodes[index]].record(nanoseconds: now &- payload.sentAt)
    }

    /// Starts a new window (any thread).
    func begin(_ window: Range<UInt32>) {
        _ = loop.submitAndWait { [self] in
            self.window = window
            for index in counts.indices { counts[index] = 0 }
            histograms = Array(repeating: LatencyHistogram(), count: histograms.count)
            return true
        }
    }

    /// Per-member counts with each member's node, and the histogram of each node, of the window (any thread).
    func collect() -> (counts: [Int], nodes: [Int], histograms: [LatencyHistogram], foreign: Int) {
        loop.submitAndWait { [self] in (counts, nodes, histograms, foreign) }
    }

    /// Probe packets received so far (any thread).
    var arrivalCount: Int { loop.submitAndWait { [self] in arrivals } }

    func closeAll() {
        _ = loop.submitAndWait { [self] in
            for peer in peers { peer.close() }
            return true
        }
        loop.stop()
        loop.waitUntilStopped()
    }
}

/// Latencies in 10 µs buckets up to 100 ms, then 1 ms buckets up to 10 s (and one overflow bucket): percentiles
/// without keeping every sample.
struct LatencyHistogram: Sendable {
    static let fine = 10_000, coarse = 9_900
    static let buckets = fine + coarse
    private(set) var counts = [UInt32](repeating: 0, count: LatencyHistogram.buckets + 1)
    private(set) var total = 0
    private(set) var maximum: UInt64 = 0

    static func bucket(_ nanoseconds: UInt64) -> Int {
        let micros = Int(min(nanoseconds / 1000, UInt64(Int.max)))
        if micros < 100_000 { return micros / 10 }
        return min(fine + (micros - 100_000) / 1000, buckets)
    }

    /// The upper edge of a bucket in nanoseconds.
    static func upperEdge(_ bucket: Int) -> UInt64 {
        bucket < fine ? UInt64(bucket + 1) * 10_000 : 100_000_000 + UInt64(bucket - fine + 1) * 1_000_000
    }

    mutating func record(nanoseconds: UInt64) {
        counts[Self.bucket(nanoseconds)] += 1
        total += 1
        maximum = max(maximum, nanoseconds)
    }

    mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        total += other.total
        maximum = max(maximum, other.maximum)
    }

    /// The upper edge of the bucket holding the `fraction` quantile, in milliseconds (nil when empty; the maximum
    /// when it is beyond 10 s).
    func percentile(_ fraction: Double) -> Double? {
        guard total > 0 else { return nil }
        let rank = max(Int((Double(total) * fraction).rounded(.up)), 1)
        var seen = 0
        for (index, count) in counts.enumerated() {
            seen += Int(count)
            if seen >= rank { return index == Self.buckets ? Double(maximum) / 1e6 : Double(min(Self.upperEdge(index), maximum)) / 1e6 }
        }
        return Double(maximum) / 1e6
    }
}
