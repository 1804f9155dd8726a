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
    /// The recordings this node's engine runs, by room: with several nodes, another node may stop one (a request
    /// there, its room emptied there), which this node learns from the row once the room has caught up.
    var runningHere: [String: String] = [:]

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
                       maxDuration: configuration.maxRecordingDuration, node: node)
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
struct RecordingObserver: BatchObserver {
    func batchDidCommit(_ end: BatchEnd, in rooms: RoomsService) {
        let recordings = rooms.rules.recordings
        if recordings.node != nil, end.received.contains(where: { if case .cluster(.nodesExpired) = $0.0 { true } else { false } }) {
            interruptThoseOfDeadNodes(rooms)
        }
        guard let engine = recordings.engine else { return }
        for recordingID in end.recordings.stops {
            recordings.runningHere = recordings.runningHere.filter { $0.value != recordingID }
            engine.stop(recordingID: recordingID)
        }
        // After this batch's own stops, which are no longer running here: each recording is stopped once.
        if recordings.node != nil { stopThoseStoppedElsewhere(end, rooms, engine) }
        for start in end.recordings.starts {
            do {
                try engine.start(start)
                recordings.runningHere[start.roomID] = start.recordingID
            } catch {
                rooms.logger.error("recording did not start", ["recording": start.recordingID, "room": start.roomID, "error": "\(error)"])
                rooms.recordingEnded(recordingID: start.recordingID, reason: RecordingEndReason.failed, manifestJSON: [])
            }
        }
    }

    /// Several nodes: a room this node records that the batch changed (caught up from another node among them) is
    /// checked against its row, and a recording stopped elsewhere is stopped here. Only rooms recorded here are read.
    private func stopThoseStoppedElsewhere(_ end: BatchEnd, _ rooms: RoomsService, _ engine: any RecordingEngine) {
        let recordings = rooms.rules.recordings
        for (roomID, recordingID) in recordings.runningHere where end.changedRooms.contains(roomID) {
            guard let record = try? rooms.store.read({ try $0.recording(id: recordingID) }), record.stoppedAt != nil else { continue }
            recordings.runningHere[roomID] = nil
            if let room = rooms.state.rooms[roomID], room.recording?.id == recordingID { room.recording = nil }
            engine.stop(recordingID: recordingID)
        }
    }

    /// Several nodes: a node died (its lease ran out) with recordings running; they end as interrupted, so their rooms
    /// stop showing the mark (every live node may try; the first one's command finds the row still `recording`).
    private func interruptThoseOfDeadNodes(_ rooms: RoomsService) {
        let node = rooms.rules.recordings.node
        guard let orphaned = try? rooms.store.read({ try $0.recordingsLeftBehind(by: node) }) else { return }
        for record in orphaned where record.node != node {
            rooms.recordingEnded(recordingID: record.id, reason: RecordingEndReason.interrupted, manifestJSON: [])
        }
    }

    /// A batch that rolled back has its rooms re-read, their recordings with them (`RoomsService.reloadRecordings`).
    func batchDidRollBack(_ end: BatchEnd, in rooms: RoomsService) {}
}
