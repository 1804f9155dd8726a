#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import ParlorClient
import ParlorLoop
import ParlorMedia
import ParlorMediaClient
import ParlorRecording

/// `parlor join --play FILE.opus --record FILE.ogg`: audio in tests without a browser. The member opens a peer
/// connection with the server's forwarding unit (`media:offer` on its session; ParlorMediaClient's `MediaPeer`, our
/// own SRTP), sends an Ogg Opus file as its microphone (`OggOpusPlayer`) and writes what it hears
/// (`HeardAudioRecorder`). Files are checked before the join (exit 2); the recording is finished when the process
/// exits, whichever way (an `atexit` handler), so the files are complete Ogg Opus streams.
enum JoinAudio {
    static let valued: Set<String> = ["--play", "--record", "--record-mode"]
    static let switches: Set<String> = ["--play-loop"]
    static let help = """
          --play FILE        send FILE (Ogg Opus) as this member's microphone through the server's forwarding unit
                             (--media sfu), in real time; when it ends the member stays joined
          --play-loop        with --play: start FILE again at its end, until the command ends
          --record FILE      write what this member hears (the other members' audio) to FILE as Ogg Opus; the file
                             is complete when the command ends (Ctrl-C, SIGTERM, --until, --timeout)
          --record-mode MODE mixed (default: one file, every speaker decoded and mixed) or tracks (a file per
                             speaker, their packets as sent: FILE bob.ogg gives bob-alice.ogg, bob-carol.ogg;
                             the speaker's member id when the name is unknown or taken)
          With --json, media events are JSON lines too: {"type":"media:connected",...} once the audio path is up,
          {"type":"record:track",...} for each track file, {"type":"play:ended",...} when FILE has been sent.
          Exit 2 before joining when a --play FILE cannot be read or is not Ogg Opus, or --record cannot write;
          1 after leaving when the audio path does not come up (a --media mesh server, nothing within 10 s).
        """

    /// Checks --play/--record and their files before the join: throws UsageError (exit 2). nil without them.
    static func prepare(_ options: CommandLineOptions) throws(UsageError) -> JoinMedia? {
        let playPath = options["--play"]
        let recordPath = options["--record"]
        if options.has("--play-loop"), playPath == nil { throw UsageError(description: "--play-loop goes with --play") }
        if options["--record-mode"] != nil, recordPath == nil { throw UsageError(description: "--record-mode goes with --record") }
        guard playPath != nil || recordPath != nil else { return nil }
        let clip: OggOpusClip?
        do { clip = try playPath.map { path throws(MediaClientError) in try OggOpusClip(path: path) } } catch {
            throw UsageError(description: "--play: \(error.description)")
        }
        if let clip, clip.wasTruncated, let playPath { warn("\(playPath) has no end-of-stream page: playing its \(clip.packets.count) whole packets") }
        var recorder: HeardAudioRecorder?
        if let recordPath {
            let text = options["--record-mode"] ?? HeardAudioRecorder.Mode.mixed.rawValue
            guard let mode = HeardAudioRecorder.Mode(rawValue: text) else {
                throw UsageError(description: "--record-mode must be mixed or tracks, not \(text)")
            }
            do { recorder = try HeardAudioRecorder(mode: mode, path: recordPath) } catch {
                throw UsageError(description: "--record: \(error.description)")
            }
        }
        let media: JoinMedia
        do { media = try JoinMedia(clip: clip, playPath: playPath, loops: options.has("--play-loop"), recorder: recorder) } catch {
            throw UsageError(description: "media: \(error)")
        }
        JoinMedia.finishAtExit(media)
        return media
    }
}

/// The member's peer connection for --play/--record, on an event loop of its own (`parlor-media-client`).
final class JoinMedia: @unchecked Sendable {  // `peer`, `player` and `recorder` are touched on `loop` once it runs
    let clip: OggOpusClip?
    let playPath: String?
    let loops: Bool
    let recorder: HeardAudioRecorder?
    let loop: EventLoop
    private let peer: MediaPeer
    private var player: OggOpusPlayer?
    private let started = Atomic<Bool>(false)
    /// How long the audio path may take to come up (ICE and DTLS over loopback take milliseconds).
    static let connectDeadline: Duration = .seconds(10)

    init(clip: OggOpusClip?, playPath: String?, loops: Bool, recorder: HeardAudioRecorder?) throws {
        self.clip = clip
        self.playPath = playPath
        self.loops = loops
        self.recorder = recorder
        loop = try EventLoop(name: "parlor-media-client")
        peer = try MediaPeer(loop: loop)
    }

    enum Progress: Sendable {
        case connected(profile: String)
        case failed(String)
        case interrupted
    }

    /// After the join: offers, connects, starts playing and recording; returns once the audio path is up (or `stop`,
    /// the command's SIGINT/SIGTERM wait, finished meanwhile). On failure the member leaves and the error says why
    /// (exit 1).
    func start(session: ParlorSession, room: String, membership: Membership, json: Bool, stop: Task<Void, Never>) async throws {
        do {
            try await connect(session: session, room: room, membership: membership, json: json, stop: stop)
        } catch {
            try? await session.leave(room)
            await session.close()
            throw error
        }
    }

    private func connect(session: ParlorSession, room: String, membership: Membership, json: Bool, stop: Task<Void, Never>) async throws {
        if session.mediaMode == "mesh" {
            throw MediaClientError("this server carries audio browser to browser (--media mesh): --play and --record need --media sfu")
        }
        let recorder = self.recorder
        if let recorder {
            for member in membership.members { recorder.setName(member.user.name, of: member.memberID) }
            recorder.trackOpened = { member, name, path in
                JoinCommand.report(json, ["type": .string("record:track"), "cid": .string(room), "member_id": .string(member),
                                          "name": .string(name), "path": .string(path)], "recording \(member) to \(path)")
            }
            recorder.failed = { reason in
                JoinCommand.report(json, ["type": .string("record:failed"), "cid": .string(room), "detail": .string(reason)], reason)
            }
            peer.received = { [recorder] _, packet in recorder.receive(packet, arrival: MonotonicClock.now()) }
        }
        started.store(true, ordering: .releasing)
        loop.start()
        recorder?.start(on: loop)
        watchRoom(session: session, room: room)
        // The server forwards a member's packets only once its audio is enabled, as the web client's microphone does.
        var mayEnable = clip != nil
        if clip != nil {
            do { _ = try await session.rawRequest(RequestType.audioEnable.rawValue, body: ["cid": .string(room)]) } catch {
                mayEnable = false
                warn("audio:enable was refused (\(error.code): \(error.detail)): --play sends nothing the others hear")
            }
        }
        let reply = try await offerMedia(session: session, room: room)
        guard let sdp = reply["sdp"]?.stringValue else { throw MediaClientError("media:offer's reply has no sdp") }
        let answer = try MediaAnswer(parsing: sdp)
        let sending = (try? SessionDescription(parsing: sdp))?.media.first?.direction == .recvonly
        let ssrcs = try MediaAnswer.slotSSRCs(in: sdp)
        let initialSlots = Self.slots(reply["slots"])
        let (progress, report) = AsyncStream.makeStream(of: Progress.self)
        let peer = self.peer
        peer.connected = { [peer] in report.yield(.connected(profile: peer.profile.map { "\($0)" } ?? "")) }
        peer.failed = { report.yield(.failed($0)) }
        try loop.submitAndWait { () -> Result<Void, MediaClientError> in
            recorder?.setSlotSSRCs(ssrcs)
            recorder?.assign(initialSlots)
            do { try peer.connect(to: answer) } catch { return .failure(MediaClientError("\(error)")) }
            return .success(())
        }.get()
        // The command's own interrupt task: it already left the room's join and output to this code.
        let waits = [
            Task { try? await Task.sleep(for: Self.connectDeadline); report.yield(.failed("no audio path within \(Self.connectDeadline)")) },
            Task { await stop.value; report.yield(.interrupted) },
        ]
        defer { for wait in waits { wait.cancel() } }
        var outcome = Progress.failed("the media client stopped")
        for await next in progress {
            outcome = next
            break
        }
        switch outcome {
        case .interrupted: return
        case .failed(let reason): throw MediaClientError(reason)
        case .connected(let profile):
            JoinCommand.report(json, ["type": .string("media:connected"), "cid": .string(room), "member_id": .string(membership.memberID),
                                      "profile": .string(profile), "sending": .bool(sending && mayEnable), "slots": JSONValue(ssrcs.count)],
                               "media connected (\(profile)); \(clip == nil ? "not sending" : sending && mayEnable ? "sending" : "may not send now")")
        }
        if let clip {
            let path = playPath ?? ""
            let loops = self.loops
            loop.execute { [self] in
                let player = OggOpusPlayer(clip: clip, peer: peer, loops: loops)
                player.ended = { [weak player] in
                    JoinCommand.report(json, ["type": .string("play:ended"), "cid": .string(room), "file": .string(path),
                                              "packets": JSONValue(player?.packetsSent ?? 0)], "finished playing \(path)")
                }
                self.player = player
                player.start()
            }
        }
    }

    /// media:slots (which member each slot carries) and member names for the recorder; after a resume, the same
    /// peer connection offered again, as a browser does (the server keeps its ICE, DTLS and slots).
    private func watchRoom(session: ParlorSession, room: String) {
        let events = session.observedEvents
        let recorder = self.recorder
        let loop = self.loop
        Task {
            for await event in events where event.roomID == room {
                if event.type == .memberJoined, let member = event.memberID, let name = event.user?.name {
                    loop.execute { recorder?.setName(name, of: member) }
                } else if event.eventType == .mediaSlots {
                    let slots = Self.slots(event.body["slots"])
                    loop.execute { recorder?.assign(slots) }
                } else if event.eventType == .mediaRestart {
                    warn("the node serving this room's audio stopped (media:restart): --play/--record do not move to another node")
                }
            }
        }
        Task { [self] in
            for await state in session.connectionStates {
                guard case .resumed(_, let resumed, _) = state, resumed.contains(room) else { continue }
                guard let reply = try? await offerMedia(session: session, room: room) else {
                    warn("media:offer after the resume failed: the audio path may be gone")
                    continue
                }
                let slots = Self.slots(reply["slots"])
                loop.execute { recorder?.assign(slots) }
            }
        }
    }

    /// media:offer from this member's peer: a receive slot per possible speaker when recording (the server's count),
    /// sending when playing. The same peer offers again after a resume, as a browser does.
    private func offerMedia(session: ParlorSession, room: String) async throws(ParlorError) -> JSONValue {
        let offer = peer.offer(slots: recorder == nil ? 0 : (session.mediaSlots ?? 8), sends: clip != nil)
        return try await session.rawRequest(RequestType.mediaOffer.rawValue, body: ["cid": .string(room), "sdp": .string(offer)])
    }

    static func slots(_ value: JSONValue?) -> [(mid: String, member: String?)] {
        (value?.arrayValue ?? []).compactMap { slot in slot["mid"]?.stringValue.map { ($0, slot["member_id"]?.stringValue) } }
    }

    // MARK: Exit

    private static let atExit = Locked<JoinMedia?>(nil)

    /// Registers `media` to have its recording finished when the process exits (any `exit` call).
    static func finishAtExit(_ media: JoinMedia) {
        atExit.withLock { $0 = media }
        atexit {
            guard let media = JoinMedia.atExit.withLock({ $0 }) else { return }
            media.finish()
        }
    }

    /// Stops playing and writes the recording's last pages: on the loop when it runs (waiting at most 5 s), else here.
    func finish() {
        guard started.load(ordering: .acquiring) else {
            recorder?.finish()
            return
        }
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            player?.stop()
            recorder?.finish()
            done.signal()
        }
        if done.wait(timeout: .now() + 5) == .timedOut { warn("the recording could not be finished within 5 s") }
    }
}
