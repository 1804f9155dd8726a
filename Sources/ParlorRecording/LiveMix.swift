import Foundation
import Synchronization

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
    /// A speaker not heard for this long leaves the mix (back at their next packet): a stream that runs for hours
    /// does not keep decoding the silence of everyone who ever spoke.
    public static let defaultSpeakerTimeout: Duration = .seconds(10)

    /// OpusHead and OpusTags: what every listener gets before the first page of audio.
    public let headerPages: [UInt8]
    private let queue: RecorderQueue
    private let speakers: LiveMixSpeakers

    /// Starts its own thread (`parlor-live`). `onPages` runs on it.
    public init(roomID: String, bitsPerSecond: Int32 = 64_000, speakerTimeout: Duration = defaultSpeakerTimeout,
                onPages: @escaping @Sendable ([UInt8]) -> Void) throws(OpusError) {
        let queue = RecorderQueue(capacity: Self.queueCapacity)
        self.queue = queue
        let mixer = try OpusMixer<String>(serialNumber: UInt32.random(in: 0...UInt32.max),
                                          tags: OpusTags(comments: ["PARLOR_ROOM=\(roomID)", "PARLOR_LIVE=1"]),
                                          bitsPerSecond: bitsPerSecond, jitterWindow: .milliseconds(100), flushInterval: Self.pageInterval)
        headerPages = mixer.takeHeaderPages()
        let speakers = LiveMixSpeakers()
        self.speakers = speakers
        let session = LiveMixSession(mixer: mixer, speakerTimeout: speakerTimeout, speakers: speakers, onPages: onPages)
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

    /// Speakers in the mix now, as its thread last counted them.
    public var speakerCount: Int { speakers.count.load(ordering: .relaxed) }
}

/// The mix's speaker count, written by its thread.
final class LiveMixSpeakers: Sendable {
    let count = Atomic<Int>(0)
}

/// The mixer, handed to the mix's thread at start and touched only there.
private final class LiveMixSession: @unchecked Sendable {  // created on the caller's thread, then used only on the mix's
    let mixer: OpusMixer<String>
    let onPages: @Sendable ([UInt8]) -> Void
    let speakerTimeout: UInt64
    let speakers: LiveMixSpeakers
    let startedAt = MonotonicTime.now()
    /// When each speaker in the mix was last heard (monotonic ns).
    var lastHeard: [String: UInt64] = [:]
    var nextPrune: UInt64 = 0

    init(mixer: OpusMixer<String>, speakerTimeout: Duration, speakers: LiveMixSpeakers, onPages: @escaping @Sendable ([UInt8]) -> Void) {
        self.mixer = mixer
        self.speakerTimeout = UInt64(max(0, nanoseconds(speakerTimeout)))
        self.speakers = speakers
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
                if lastHeard.updateValue(item.arrival, forKey: item.member) == nil { speakers.count.store(lastHeard.count, ordering: .relaxed) }
            }
            let now = MonotonicTime.now()
            guard now >= nextTick else { continue }
            nextTick = max(nextTick + tick, now + tick / 2)
            if now >= nextPrune { prune(now) }
            // A frame libopus cannot encode is not worth stopping every listener for: that tick's pages are skipped.
            guard let pages = try? mixer.advance(to: .nanoseconds(Int64(now - startedAt))), !pages.isEmpty else { continue }
            onPages(pages)
        }
    }

    /// Every tenth of the timeout (at most once a second): speakers silent for `speakerTimeout` leave the mix.
    private func prune(_ now: UInt64) {
        nextPrune = now + min(1_000_000_000, speakerTimeout / 10)
        for (speaker, heard) in lastHeard where now > heard && now - heard > speakerTimeout {
            mixer.removeSpeaker(speaker)
            lastHeard[speaker] = nil
        }
        speakers.count.store(lastHeard.count, ordering: .relaxed)
    }
}
