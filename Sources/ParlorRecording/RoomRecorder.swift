import Foundation

/// Records one room: a track per speaker (`track-N.opus`, their Opus packets as sent) and the mix (`mix.opus`), in
/// `settings.directory` with `manifest.json` (docs/recording.md, "The recorder").
///
/// Media workers hand it each packet through `append`, which only puts it on two bounded queues; the recorder's own
/// thread (`parlor-record`) takes one every 20 ms, feeds the track writers and appends the pages they return to the
/// files with `write(2)` (a page at least once a second of audio); the mix's thread (`parlor-mix`, RecordingMix) does
/// the same with the other for mix.opus. A full disk stops it with `.diskFull`, any
/// other write error with `.failed`, `settings.maxDuration` with `.maxDuration`, `stop` with the reason given; each
/// way it finishes the files it can, writes the final manifest and calls `onStop` once, from its thread.
public final class RoomRecorder: Sendable {
    /// Packets waiting for the recorder's thread: 10 s of 8 speakers at 50 packets a second.
    public static let queueCapacity = 4_000
    /// How often the thread takes the queue and writes what the writers release.
    public static let tick: Duration = .milliseconds(20)

    public let settings: RecordingSettings
    /// The recording's 0:00 on CLOCK_MONOTONIC (ns), the clock of `append`'s arrivals: when the recorder started.
    public let startedAt: UInt64
    private let queue: RecorderQueue
    private let mix: RecordingMix

    /// Starts its own thread; creates the directory and writes manifest.json with state "recording".
    public init(settings: RecordingSettings, onStop: @escaping @Sendable (RecordingManifest) -> Void) throws {
        self.settings = settings
        let queue = RecorderQueue(capacity: Self.queueCapacity)
        self.queue = queue
        let session = try RecordingSession(settings: settings)
        startedAt = session.startedAt
        let mix = try RecordingMix(settings: settings, startedAt: session.startedAt, tags: RecordingSession.tags(settings, member: nil),
                                   onFailure: { queue.requestStop($0) })
        self.mix = mix
        let thread = Thread {
            nameThread("parlor-record")
            session.run(queue, mix: mix, onStop: onStop)
        }
        thread.start()
    }

    /// Any thread, never blocks: a bounded queue (full: the packet is dropped and counted). `rtp`: a whole decrypted
    /// RTP packet; `arrival`: CLOCK_MONOTONIC in ns, the media workers' clock.
    public func append(rtp: [UInt8], member: String, arrival: UInt64) {
        let item = RecorderQueue.Item(rtp: rtp, member: member, arrival: arrival)
        queue.append(item)
        mix.append(item)
    }

    /// Idempotent; finishes the files, writes the final manifest.json, then calls onStop exactly once (from its thread).
    public func stop(reason: RecordingStopReason = .requested) {
        queue.requestStop(reason)
    }

    /// Packets dropped because a queue was full (the tracks' or the mix's).
    public var droppedPackets: Int { queue.droppedCount + mix.droppedPackets }
}

/// A recording's files and writers, handed to the recorder's thread at start and touched only there.
final class RecordingSession: @unchecked Sendable {  // created on the caller's thread, then used only on the recorder's
    final class Track {
        var writer: OpusTrackWriter
        let file: RecordingFile
        let index: Int

        init(writer: OpusTrackWriter, file: RecordingFile, index: Int) {
            self.writer = writer
            self.file = file
            self.index = index
        }
    }

    let settings: RecordingSettings
    /// CLOCK_MONOTONIC ns: the recording's 0:00.
    let startedAt: UInt64
    private var manifest: RecordingManifest
    private var tracks: [String: Track] = [:]
    private var order: [String] = []
    /// Set by the first failed write: nothing more is written.
    private var failure: RecordingStopReason?

    init(settings: RecordingSettings) throws {
        self.settings = settings
        try FileManager.default.createDirectory(atPath: settings.directory, withIntermediateDirectories: true)
        startedAt = MonotonicTime.now()
        manifest = RecordingManifest(recordingID: settings.recordingID, roomID: settings.roomID, node: settings.node,
                                     startedAt: Int64(Date().timeIntervalSince1970 * 1_000))
        try RecordingFile.replace(path(RecordingManifest.fileName), with: manifest.encoded())
    }

    private func path(_ file: String) -> String { settings.directory + "/" + file }

    static func tags(_ settings: RecordingSettings, member: String?) -> OpusTags {
        var comments = ["PARLOR_RECORDING=\(settings.recordingID)", "PARLOR_ROOM=\(settings.roomID)"]
        if let member { comments.append("PARLOR_MEMBER=\(member)") }
        return OpusTags(comments: comments)
    }

    func run(_ queue: RecorderQueue, mix: RecordingMix, onStop: @Sendable (RecordingManifest) -> Void) {
        let tick = UInt64(nanoseconds(RoomRecorder.tick))
        let limit = settings.maxDuration.map { maximum in
            let (end, overflow) = startedAt.addingReportingOverflow(UInt64(max(0, nanoseconds(maximum))))
            return overflow ? UInt64.max : end
        }
        var nextTick = startedAt + tick
        var reason: RecordingStopReason
        while true {
            let (items, stop) = queue.take(waitingUntil: min(nextTick, limit ?? .max))
            for item in items { receive(item) }
            let now = MonotonicTime.now()
            if let stop {
                reason = stop
                break
            }
            if let limit, now >= limit {
                reason = .maxDuration
                break
            }
            if now >= nextTick {
                advance(to: now)
                nextTick = max(nextTick + tick, now + tick / 2)
            }
            if let failure {
                reason = failure
                break
            }
        }
        queue.requestStop(reason)  // appends from now on are dropped
        let end = reason == .maxDuration ? min(limit ?? .max, MonotonicTime.now()) : MonotonicTime.now()
        onStop(finish(reason, at: end, mix: mix))
    }

    private func receive(_ item: RecorderQueue.Item) {
        guard failure == nil, let packet = RTPOpusPacket(parsing: item.rtp), Opus.sampleCount(of: packet.payload) != nil else { return }
        let arrival = Duration.nanoseconds(item.arrival > startedAt ? Int64(item.arrival - startedAt) : 0)
        guard let track = tracks[item.member] ?? openTrack(for: item.member, at: arrival, firstPayload: packet.payload) else { return }
        track.writer.receive(sequence: packet.sequence, timestamp: packet.timestamp, payload: packet.payload, arrival: arrival)
    }

    /// A member's first packet: its track is listed in the manifest, then its file created (a crash between the two
    /// leaves a listed track without a file, which `closeInterrupted` reads as 0 ms, not a file nobody lists). The
    /// track is stereo when that packet is (its TOC's s bit, RFC 6716 §3.1: a browser sends stereo only with
    /// `stereo=1`); players decode a later mono packet of it to both channels.
    private func openTrack(for member: String, at arrival: Duration, firstPayload: [UInt8]) -> Track? {
        let index = order.count + 1
        let file = "track-\(index).opus"
        manifest.tracks.append(RecordingManifest.Track(member: member, file: file, offsetMs: milliseconds(arrival), durationMs: 0))
        do throws(RecordingFileError) {
            try RecordingFile.replace(path(RecordingManifest.fileName), with: manifest.encoded())
            let channels: UInt8 = firstPayload[0] & 0x04 != 0 ? 2 : 1
            let track = Track(writer: OpusTrackWriter(serialNumber: UInt32.random(in: 0...UInt32.max), channelCount: channels,
                                                      tags: Self.tags(settings, member: member)),
                              file: try RecordingFile(path: path(file)), index: index)
            tracks[member] = track
            order.append(member)
            return track
        } catch {
            manifest.tracks.removeLast()
            fail(error)
            return nil
        }
    }

    private func advance(to now: UInt64) {
        let elapsed = Duration.nanoseconds(Int64(now - startedAt))
        for member in order {
            guard failure == nil, let track = tracks[member] else { return }
            write(track.writer.advance(to: elapsed), to: track.file)
        }
    }

    private func write(_ bytes: [UInt8], to file: RecordingFile) {
        guard failure == nil else { return }
        do throws(RecordingFileError) { try file.append(bytes) } catch { fail(error) }
    }

    private func fail(_ error: RecordingFileError) {
        guard failure == nil else { return }
        if case .full = error { failure = .diskFull } else { failure = .failed }
    }

    /// The last pages (unless a write failed: then the files stay as far as they were written, whole pages), the
    /// durations and the final manifest, written if the disk takes it.
    private func finish(_ requested: RecordingStopReason, at end: UInt64, mix: RecordingMix) -> RecordingManifest {
        let elapsed = Duration.nanoseconds(Int64(end - startedAt))
        for member in order where failure == nil {
            let track = tracks[member]!
            write(track.writer.finish(at: elapsed), to: track.file)
        }
        for track in tracks.values { track.file.close() }
        // The mix ends where the tracks do; a write it failed fails the recording as the tracks' would.
        if let mixFailure = mix.finish(at: end, reason: requested), failure == nil { failure = mixFailure }
        let reason = failure ?? requested
        // Stopped because the server is stopping: its files are whole, but the recording did not end as asked.
        manifest.state = reason == .interrupted ? "interrupted" : "complete"
        manifest.stopReason = reason
        if failure == nil {
            manifest.durationMs = milliseconds(elapsed)
            for (index, member) in order.enumerated() {
                manifest.tracks[index].durationMs = (tracks[member]!.writer.granulePosition - Int64(OpusTrackWriter.preSkip)) / 48
            }
        } else {
            for index in manifest.tracks.indices {
                manifest.tracks[index].durationMs = RecordingFileRepair.close(path(manifest.tracks[index].file)) ?? 0
            }
            manifest.durationMs = RecordingFileRepair.close(path(RecordingManifest.mixFile)) ?? manifest.tracks.map(\.durationMs).max() ?? 0
        }
        try? RecordingFile.replace(path(RecordingManifest.fileName), with: manifest.encoded())
        return manifest
    }
}

/// Saturating: a maximum duration of any length (292 years and more included) is a number, never a trap.
func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return seconds < 0 ? .min : .max }
    return whole.addingReportingOverflow(attoseconds / 1_000_000_000).overflow ? (seconds < 0 ? .min : .max) : whole + attoseconds / 1_000_000_000
}

func milliseconds(_ duration: Duration) -> Int64 { nanoseconds(duration) / 1_000_000 }
