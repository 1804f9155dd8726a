#if canImport(Glibc)
import Glibc
#endif
import ParlorLoop
import ParlorMedia
import ParlorRecording

/// What a member hears through the forwarding unit, written as Ogg Opus: `.mixed`, one file of every receive slot
/// decoded, summed and encoded again (`OpusMixer`), or `.tracks`, one file per speaker written from their RTP packets
/// without transcoding (`OpusTrackWriter`), named `BASE-NAME.EXT` from the `--record` path `BASE.EXT` and the
/// speaker's user name (their member id when the name is unknown, unusable or taken by another speaker's file).
///
/// Every file keeps the recording's time from its creation: silence where nothing was heard, so the tracks line up
/// with each other and with the mix. Slots are told apart by the SSRCs of the server's answer; a slot's speaker comes
/// from `media:slots` (`assign`). In tracks mode, packets of a slot whose speaker is not known yet wait (at most 5 s of
/// them) for it.
///
/// Created on any thread; once `start` ran, every call is on the loop's thread. `finish` writes the last pages:
/// afterwards every file is a complete Ogg Opus stream.
public final class HeardAudioRecorder: @unchecked Sendable {  // confined: the creating thread, then the loop once started
    public enum Mode: String, Sendable { case mixed, tracks }

    final class Track {
        var writer: OpusTrackWriter
        let file: AudioOutputFile
        init(writer: OpusTrackWriter, file: AudioOutputFile) {
            self.writer = writer
            self.file = file
        }
    }

    struct Waiting {
        var packet: RTPOpusPacket
        var arrival: Duration
    }

    public let mode: Mode
    public let path: String
    /// A track's file was created: (member id, the name it was given, its path).
    public var trackOpened: ((String, String, String) -> Void)?
    /// A write failed (disk full, …): the sentence; that file keeps its whole pages and gets nothing more.
    public var failed: ((String) -> Void)?
    /// CLOCK_MONOTONIC ns: the files' 0:00.
    public let startedAt: UInt64

    private var mixFile: AudioOutputFile?
    private var mixer: OpusMixer<String>?
    private var tracks: [String: Track] = [:]
    private var trackOrder: [String] = []
    private var usedPaths: Set<String> = []
    private var midBySSRC: [UInt32: String] = [:]
    private var memberByMid: [String: String] = [:]
    private var names: [String: String] = [:]
    private var waiting: [String: [Waiting]] = [:]
    private var loop: EventLoop?
    private var reportedFailures: Set<String> = []
    public private(set) var isFinished = false
    public static let waitingLimit = 250
    static let tick = TimeSpan.milliseconds(20)

    /// Mixed: creates (empties) `path` now. Tracks: checks that `path`'s folder exists and is writable (files come
    /// with their speakers). Throws a sentence.
    public init(mode: Mode, path: String) throws(MediaClientError) {
        self.mode = mode
        self.path = path
        switch mode {
        case .mixed:
            mixFile = try AudioOutputFile(path: path)
            do {
                mixer = try OpusMixer<String>(serialNumber: UInt32.random(in: 0...UInt32.max),
                                              tags: OpusTags(comments: ["PARLOR_HEARD=mixed"]))
            } catch { throw MediaClientError("libopus would not make an encoder: \(error)") }
        case .tracks:
            let folder = Self.folder(of: path)
            var status = stat()
            guard stat(folder, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                throw MediaClientError("cannot write \(path): no folder \(folder)")
            }
            guard access(folder, W_OK | X_OK) == 0 else { throw MediaClientError("cannot write \(path): \(folder) is not writable") }
        }
        startedAt = MonotonicClock.now()
    }

    /// Where speaker `label`'s track goes: `bob.ogg` → `bob-alice.ogg`, `out` → `out-alice.ogg`.
    public static func trackPath(_ path: String, label: String) -> String {
        let slash = path.lastIndex(of: "/")
        if let dot = path.lastIndex(of: "."), slash.map({ dot > $0 }) ?? true, dot != path.startIndex,
           slash.map({ path.index(after: $0) != dot }) ?? true {
            return String(path[..<dot]) + "-" + label + String(path[dot...])
        }
        return path + "-" + label + ".ogg"
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Names as files take them: letters, digits, '.', '_' and '-'; anything else becomes '_'.
    static func fileLabel(_ name: String) -> String? {
        let label = String(name.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._-".unicodeScalars.contains(scalar))
                ? Character(scalar) : "_"
        })
        return label.isEmpty || label.hasPrefix(".") ? nil : label
    }

    /// Hands the recorder to `loop` and writes every 20 ms there. Call once, from any thread.
    public func start(on loop: EventLoop) {
        loop.execute { [self] in
            self.loop = loop
            tick()
        }
    }

    /// The SSRC each receive slot's mid is sent with (from the server's answer).
    public func setSlotSSRCs(_ ssrcs: [String: UInt32]) {
        for (mid, ssrc) in ssrcs { midBySSRC[ssrc] = mid }
    }

    /// A member's user name, for their track's file.
    public func setName(_ name: String, of member: String) {
        names[member] = name
    }

    /// `media:slots`: which member each mid carries now (nil: nobody).
    public func assign(_ slots: [(mid: String, member: String?)]) {
        for slot in slots {
            memberByMid[slot.mid] = slot.member
            guard let member = slot.member, let held = waiting.removeValue(forKey: slot.mid) else { continue }
            for packet in held { write(packet.packet, arrival: packet.arrival, from: member) }
        }
    }

    /// One received RTP packet, decrypted; `arrival` on CLOCK_MONOTONIC (ns).
    public func receive(_ packet: [UInt8], arrival: UInt64) {
        guard !isFinished, let rtp = RTPOpusPacket(parsing: packet), Opus.sampleCount(of: rtp.payload) != nil else { return }
        let mid = midBySSRC[rtp.ssrc] ?? "ssrc-\(rtp.ssrc)"
        let elapsed = Duration.nanoseconds(Int64(arrival > startedAt ? arrival - startedAt : 0))
        switch mode {
        case .mixed:
            _ = try? mixer?.receive(from: mid, sequence: rtp.sequence, timestamp: rtp.timestamp, payload: rtp.payload, arrival: elapsed)
        case .tracks:
            if let member = memberByMid[mid] {
                write(rtp, arrival: elapsed, from: member)
            } else {
                var held = waiting[mid] ?? []
                if held.count == Self.waitingLimit { held.removeFirst() }
                held.append(Waiting(packet: rtp, arrival: elapsed))
                waiting[mid] = held
            }
        }
    }

    /// The last pages of every file; closes them. Idempotent.
    public func finish() {
        guard !isFinished else { return }
        isFinished = true
        let elapsed = Duration.nanoseconds(Int64(MonotonicClock.now() - startedAt))
        if let mixer, let mixFile {
            if let bytes = try? mixer.finish(at: elapsed) { append(bytes, to: mixFile) }
            mixFile.close()
        }
        for member in trackOrder {
            guard let track = tracks[member] else { continue }
            append(track.writer.finish(at: elapsed), to: track.file)
            track.file.close()
        }
    }

    /// The files written so far: the mix, or each track's path by member id.
    public var trackPaths: [String: String] { tracks.mapValues(\.file.path) }

    private func tick() {
        guard !isFinished, let loop else { return }
        let elapsed = Duration.nanoseconds(Int64(MonotonicClock.now() - startedAt))
        if let mixer, let mixFile {
            do { append(try mixer.advance(to: elapsed), to: mixFile) } catch { report("libopus failed to encode the mix: \(error)") }
        }
        for member in trackOrder {
            guard let track = tracks[member] else { continue }
            append(track.writer.advance(to: elapsed), to: track.file)
        }
        _ = loop.schedule(after: Self.tick) { [weak self] in self?.tick() }
    }

    private func write(_ rtp: RTPOpusPacket, arrival: Duration, from member: String) {
        guard let track = tracks[member] ?? openTrack(for: member, stereo: rtp.payload[0] & 0x04 != 0) else { return }
        track.writer.receive(sequence: rtp.sequence, timestamp: rtp.timestamp, payload: rtp.payload, arrival: arrival)
    }

    private func openTrack(for member: String, stereo: Bool) -> Track? {
        var label = names[member].flatMap(Self.fileLabel) ?? member
        if usedPaths.contains(Self.trackPath(path, label: label)) { label = Self.fileLabel(member) ?? "member" }
        let trackPath = Self.trackPath(path, label: label)
        let file: AudioOutputFile
        do { file = try AudioOutputFile(path: trackPath) } catch {
            report(error.description)
            return nil
        }
        var comments = ["PARLOR_MEMBER=\(member)"]
        if let name = names[member] { comments.append("PARLOR_NAME=\(name)") }
        let track = Track(writer: OpusTrackWriter(serialNumber: UInt32.random(in: 0...UInt32.max), channelCount: stereo ? 2 : 1,
                                                  tags: OpusTags(comments: comments)),
                          file: file)
        tracks[member] = track
        trackOrder.append(member)
        usedPaths.insert(trackPath)
        trackOpened?(member, label, trackPath)
        return track
    }

    private func append(_ bytes: [UInt8], to file: AudioOutputFile) {
        guard !bytes.isEmpty, !file.append(bytes), let failure = file.failure else { return }
        report(failure)
    }

    private func report(_ failure: String) {
        guard reportedFailures.insert(failure).inserted else { return }
        failed?(failure)
    }
}
