import ParlorProtocol

/// The rooms thread's side of recording (issue 38): the engine that writes the files (set once the app has made
/// it), this node's name for the rows, and where each recording's directory is. Confined to the rooms thread
/// (held by `RoomRules`), so not Sendable.
final class RoomRecordings {
    let configuration: RoomsConfiguration
    /// Whether audio passes the server (--media sfu); with --media mesh there is nothing to record.
    let forwardsAudio: Bool
    /// nil until the app sets one (`RoomsService.useRecordingEngine`): recording is then refused.
    var engine: (any RecordingEngine)?
    /// The node that records here (its rows' `node`); nil with one node.
    var node: String?

    init(configuration: RoomsConfiguration, mediaMode: String?) {
        self.configuration = configuration
        forwardsAudio = mediaMode == MediaMode.sfu.rawValue
    }

    /// The directory of one recording's files.
    func directory(of recordingID: String) -> String {
        configuration.recordingsDirectory + "/" + recordingID
    }

    /// Refuses a start this server cannot record.
    func checkCanRecord(_ roomID: String) throws {
        guard forwardsAudio else {
            throw RoomError(.roomRecordingUnavailable, "this server forwards no audio (--media mesh): there is nothing to record in room \(roomID)")
        }
        guard engine != nil else { throw RoomError(.roomRecordingUnavailable, "this server has no recording engine") }
    }

    /// What the engine is asked to record.
    func start(_ recordingID: String, roomID: String) -> RecordingStart {
        RecordingStart(recordingID: recordingID, roomID: roomID, directory: directory(of: recordingID),
                       maxDuration: configuration.maxRecordingDuration)
    }
}

/// The engine's side of a batch: recordings to start and stop once the batch has committed (`RecordingObserver`).
struct RecordingChanges {
    var starts: [RecordingStart] = []
    var stops: [String] = []

    var isEmpty: Bool { starts.isEmpty && stops.isEmpty }

    mutating func append(_ other: RecordingChanges) {
        starts += other.starts
        stops += other.stops
    }
}

/// Starts and stops recordings after the commit that stored them, never inside the transaction: an engine that
/// started a recording whose row then rolled back would record a room nobody asked for. A start the engine refuses
/// ends the recording as failed, through the same path as any recording that ends (`RoomsService.recordingEnded`).
/// After a rollback the live rooms the batch touched are re-read; a start that never committed is forgotten there.
struct RecordingObserver: BatchObserver {
    func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService) {
        guard !end.recordings.isEmpty, let engine = rooms.rules.recordings.engine else { return }
        for recordingID in end.recordings.stops { engine.stop(recordingID: recordingID) }
        for start in end.recordings.starts {
            do {
                try engine.start(start)
            } catch {
                rooms.logger.error("recording did not start", ["recording": start.recordingID, "room": start.roomID, "error": "\(error)"])
                rooms.recordingEnded(recordingID: start.recordingID, reason: RecordingEndReason.failed, manifestJSON: [])
            }
        }
    }

    func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService) {
        for start in end.recordings.starts {
            if let room = rooms.state.rooms[start.roomID], room.recording?.id == start.recordingID { room.recording = nil }
        }
    }
}
