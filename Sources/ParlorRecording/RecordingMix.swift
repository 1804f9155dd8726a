import Foundation

/// A recording's mix (`mix.opus`) on a thread of its own, `parlor-mix`, beside the tracks' `parlor-record`: its
/// codec work (a decode per speaker and an encode every 20 ms) never delays the tracks' writes, and `top -H`, perf and
/// the media bench see the two costs apart (issue 38's targets: recording every speaker ≤ 5 % of the server's CPU,
/// mixing ≤ 10 % of a core). It stops when the tracks' thread asks (`finish`), or on a failed write, which it reports
/// through `onFailure` so that the whole recording stops.
final class RecordingMix: @unchecked Sendable {  // endAt and outcome are touched only holding `ending`
    private let queue: RecorderQueue
    /// Where the mix ends (monotonic ns), set by the tracks' thread before it stops the queue; and the outcome, once
    /// the mix thread has closed its file (.some(nil): no failure).
    private let ending = NSCondition()
    private var endAt: UInt64?
    private var outcome: RecordingStopReason??

    init(settings: RecordingSettings, startedAt: UInt64, tags: OpusTags,
         onFailure: @escaping @Sendable (RecordingStopReason) -> Void) throws {
        queue = RecorderQueue(capacity: RoomRecorder.queueCapacity)
        let session = try MixSession(path: settings.directory + "/" + RecordingManifest.mixFile, startedAt: startedAt, tags: tags)
        let thread = Thread { [self] in
            nameThread("parlor-mix")
            let failure = session.run(queue, endAt: { self.locked { self.endAt } })
            if let failure { onFailure(failure) }
            locked {
                outcome = .some(failure)
                ending.broadcast()
            }
        }
        thread.start()
    }

    /// Any thread, never blocks (see RecorderQueue).
    func append(_ item: RecorderQueue.Item) { queue.append(item) }

    /// The tracks' thread: mixes up to `end`, closes mix.opus, and returns its failure, if any.
    func finish(at end: UInt64, reason: RecordingStopReason) -> RecordingStopReason? {
        locked { endAt = end }
        queue.requestStop(reason)
        return locked {
            while outcome == nil { ending.wait() }
            return outcome ?? nil
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        ending.lock()
        defer { ending.unlock() }
        return body()
    }

    var droppedPackets: Int { queue.droppedCount }
}

/// The mixer and its file, touched only on the mix thread.
private final class MixSession: @unchecked Sendable {  // made on the caller's thread, then used only on the mix thread
    private let mixer: OpusMixer<String>
    private let file: RecordingFile
    private let startedAt: UInt64
    private var failure: RecordingStopReason?

    init(path: String, startedAt: UInt64, tags: OpusTags) throws {
        mixer = try OpusMixer<String>(serialNumber: UInt32.random(in: 0...UInt32.max), tags: tags)
        file = try RecordingFile(path: path)
        self.startedAt = startedAt
    }

    func run(_ queue: RecorderQueue, endAt: () -> UInt64?) -> RecordingStopReason? {
        let tick = UInt64(nanoseconds(RoomRecorder.tick))
        var nextTick = startedAt + tick
        while failure == nil {
            let (items, stop) = queue.take(waitingUntil: nextTick)
            for item in items { receive(item) }
            if stop != nil { break }
            let now = MonotonicTime.now()
            if now >= nextTick {
                write { try mixer.advance(to: elapsed(now)) }
                nextTick = max(nextTick + tick, now + tick / 2)
            }
        }
        if failure == nil { write { try mixer.finish(at: elapsed(endAt() ?? MonotonicTime.now())) } }
        file.close()
        return failure
    }

    private func elapsed(_ now: UInt64) -> Duration { .nanoseconds(Int64(now > startedAt ? now - startedAt : 0)) }

    private func receive(_ item: RecorderQueue.Item) {
        guard let packet = RTPOpusPacket(parsing: item.rtp), Opus.sampleCount(of: packet.payload) != nil else { return }
        let arrival = Duration.nanoseconds(item.arrival > startedAt ? Int64(item.arrival - startedAt) : 0)
        do {
            try mixer.receive(from: item.member, sequence: packet.sequence, timestamp: packet.timestamp, payload: packet.payload, arrival: arrival)
        } catch {
            failure = .failed
        }
    }

    private func write(_ pages: () throws -> [UInt8]) {
        guard failure == nil else { return }
        do {
            try file.append(try pages())
        } catch let error as RecordingFileError {
            if case .full = error { failure = .diskFull } else { failure = .failed }
        } catch {
            failure = .failed  // libopus refused: the mix cannot go on
        }
    }
}

/// The OS thread's name, which Foundation's `Thread.name` does not set on Linux (and pthread_setname_np is not
/// imported): top -H, perf and the media bench tell the recorder's threads apart by it.
func nameThread(_ name: String) {
    let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard comm >= 0 else { return }
    _ = name.utf8CString.withUnsafeBufferPointer { write(comm, $0.baseAddress, $0.count - 1) }
    _ = close(comm)
}
