import Foundation

/// One room's live stream (issue 38): the speakers' packets decoded, mixed and encoded once (`OpusMixer`), as Ogg
/// pages handed to `onPages` at least every `pageInterval`, however many listen. It needs no recording; its owner
/// starts it for a room's first listener and stops it after the last.
///
/// Like `RoomRecorder`: media workers hand it each packet through `append` (a bounded queue, never blocking), and its
/// own thread takes the queue every `tick`, mixes, and calls `onPages` with whole pages (a listener added between two
/// calls starts on a page boundary, after `headerPages`).
public final class LiveMix: Sendable {
    /// Packets waiting for the mix's thread: 10 s of 8 speakers at 50 packets a second.
    public static let queueCapacity = 4_000
    public static let tick: Duration = .milliseconds(20)
    /// Pages are cut at least this often: with the 100 ms jitter window, a listener hears a word well within 2 s.
    public static let pageInterval: Duration = .milliseconds(250)

    /// OpusHead and OpusTags: what every listener gets before the first page of audio.
    public let headerPages: [UInt8]
    private let queue: RecorderQueue

    /// Starts its own thread (`parlor-live`). `onPages` runs on it.
    public init(roomID: String, bitsPerSecond: Int32 = 64_000, onPages: @escaping @Sendable ([UInt8]) -> Void) throws(OpusError) {
        let queue = RecorderQueue(capacity: Self.queueCapacity)
        self.queue = queue
        let mixer = try OpusMixer<String>(serialNumber: UInt32.random(in: 0...UInt32.max),
                                          tags: OpusTags(comments: ["PARLOR_ROOM=\(roomID)", "PARLOR_LIVE=1"]),
                                          bitsPerSecond: bitsPerSecond, jitterWindow: .milliseconds(100), flushInterval: Self.pageInterval)
        headerPages = mixer.takeHeaderPages()
        let session = LiveMixSession(mixer: mixer, onPages: onPages)
        let thread = Thread {
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = write(comm, "parlor-live", 11)
                _ = close(comm)
            }
            session.run(queue)
        }
        thread.start()
    }

    /// Any thread, never blocks (full: the packet is dropped and counted). `arrival`: CLOCK_MONOTONIC in ns.
    public func append(rtp: [UInt8], member: String, arrival: UInt64) {
        queue.append(RecorderQueue.Item(rtp: rtp, member: member, arrival: arrival))
    }

    /// Idempotent; the thread ends at its next wake-up and calls `onPages` no more.
    public func stop() { queue.requestStop(.requested) }

    /// Packets dropped because the queue was full.
    public var droppedPackets: Int { queue.droppedCount }
}

/// The mixer, handed to the mix's thread at start and touched only there.
private final class LiveMixSession: @unchecked Sendable {  // created on the caller's thread, then used only on the mix's
    let mixer: OpusMixer<String>
    let onPages: @Sendable ([UInt8]) -> Void
    let startedAt = MonotonicTime.now()

    init(mixer: OpusMixer<String>, onPages: @escaping @Sendable ([UInt8]) -> Void) {
        self.mixer = mixer
        self.onPages = onPages
    }

    func run(_ queue: RecorderQueue) {
        let tick = UInt64(nanoseconds(LiveMix.tick))
        var nextTick = startedAt + tick
        while true {
            let (items, stop) = queue.take(waitingUntil: nextTick)
            if stop != nil { return }
            for item in items {
                guard let packet = RTPOpusPacket(parsing: item.rtp), Opus.sampleCount(of: packet.payload) != nil else { continue }
                let arrival = Duration.nanoseconds(item.arrival > startedAt ? Int64(item.arrival - startedAt) : 0)
                _ = try? mixer.receive(from: item.member, sequence: packet.sequence, timestamp: packet.timestamp,
                                       payload: packet.payload, arrival: arrival)
            }
            let now = MonotonicTime.now()
            guard now >= nextTick else { continue }
            nextTick = max(nextTick + tick, now + tick / 2)
            // A frame libopus cannot encode is not worth stopping every listener for: that tick's pages are skipped.
            guard let pages = try? mixer.advance(to: .nanoseconds(Int64(now - startedAt))), !pages.isEmpty else { continue }
            onPages(pages)
        }
    }
}
