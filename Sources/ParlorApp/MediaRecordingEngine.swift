import Dispatch
import ParlorMedia
import ParlorRecording
import ParlorRooms
import Synchronization

/// The recording engine of a server with a forwarding unit (issue 38): each recording is a `RoomRecorder` (its own
/// thread, its files) fed by a tap on the media server for its room, and its end goes back to the rooms service. The
/// rooms domain decides who records what and when; this only joins the two libraries.
final class MediaRecordingEngine: RecordingEngine {
    private struct Running {
        let roomID: String
        let recorder: RoomRecorder
    }

    private let media: MediaServer
    /// The rooms service's `recordingEnded`, holding the service weakly (it holds this engine).
    private let report: @Sendable (_ recordingID: String, _ reason: String, _ manifest: [UInt8]) -> Void
    /// This node's recordings by id: only they are stopped here (a stop for another node's recording is ignored).
    private let running = Mutex<[String: Running]>([:])
    /// Set by `stopAll`: the recorders' ends are signalled here, not reported to a rooms thread that is stopping.
    private let shutdown = Mutex<DispatchGroup?>(nil)

    init(media: MediaServer, rooms: RoomsService) {
        self.media = media
        report = { [weak rooms] id, reason, manifest in rooms?.recordingEnded(recordingID: id, reason: reason, manifestJSON: manifest) }
    }

    func start(_ recording: RecordingStart) throws {
        let settings = RecordingSettings(recordingID: recording.recordingID, roomID: recording.roomID, directory: recording.directory,
                                         maxDuration: recording.maxDuration, node: recording.node)
        let recorder = try RoomRecorder(settings: settings) { [weak self] manifest in self?.ended(manifest) }
        // The rooms thread starts recordings after its batch commits, so a start can come after `stopAll` took its
        // list: it is stopped at once, interrupted, and the shutdown's second `stopAll` waits for its files.
        let stopping = running.withLock { running -> DispatchGroup? in
            if let group = shutdown.withLock({ $0 }) { return group }
            running[recording.recordingID] = Running(roomID: recording.roomID, recorder: recorder)
            return nil
        }
        if let stopping {
            stopping.enter()
            recorder.stop(reason: .interrupted)
            return
        }
        media.setTap(group: recording.roomID, RecorderTap(recorder))
    }

    func stop(recordingID: String) {
        // Forgotten first: its onStop then leaves the room's tap alone, which may already be a newer recording's.
        guard let entry = running.withLock({ $0.removeValue(forKey: recordingID) }) else { return }
        media.setTap(group: entry.roomID, nil)
        entry.recorder.stop(reason: .requested)
    }

    func stopAll() {
        let (group, stopping) = running.withLock { running in
            let group = shutdown.withLock { current in
                if let current { return current }
                let group = DispatchGroup()
                current = group
                return group
            }
            defer { running.removeAll() }
            return (group, Array(running.values))
        }
        for entry in stopping {
            group.enter()
            media.setTap(group: entry.roomID, nil)
            entry.recorder.stop(reason: .interrupted)
        }
        // The last pages and the manifest take milliseconds; a recorder stuck on a dead disk is not waited for long.
        _ = group.wait(timeout: .now() + 5)
    }

    /// On the recorder's thread, once its files and manifest are final: asked to stop, or stopped by itself (disk
    /// full, --max-recording-hours, a failed write), when its tap is taken away here.
    private func ended(_ manifest: RecordingManifest) {
        if let group = shutdown.withLock({ $0 }), manifest.stopReason == .interrupted {
            group.leave()
            return
        }
        if running.withLock({ $0.removeValue(forKey: manifest.recordingID) }) != nil {
            media.setTap(group: manifest.roomID, nil)
        }
        report(manifest.recordingID, (manifest.stopReason ?? .requested).rawValue, manifest.encoded())
    }
}

/// The media workers' tap of one room, handing each packet to its recorder's queue (which never blocks).
private final class RecorderTap: MediaPacketTap {
    let recorder: RoomRecorder

    init(_ recorder: RoomRecorder) { self.recorder = recorder }

    func received(rtp: [UInt8], member: String, arrival: UInt64) {
        recorder.append(rtp: rtp, member: member, arrival: arrival)
    }
}

extension RecordingEngineFactory {
    /// Recordings written by ParlorRecording from the forwarding unit's packets. At a start, the recordings a killed
    /// process left unfinished are closed (their files cut to whole pages), and their manifests and those of the
    /// recordings a stopping server finished (`stopAll`) go to the rooms domain, which takes the ones whose rows are
    /// still `recording`.
    public static let mediaRecorder = RecordingEngineFactory(
        make: { media, rooms in MediaRecordingEngine(media: media, rooms: rooms) },
        closeInterrupted: { root in
            Dictionary(RoomRecorder.closeInterrupted(under: root, includingFinished: true).map { ($0.recordingID, $0.encoded()) },
                       uniquingKeysWith: { first, _ in first })
        })
}
