import ParlorProtocol

/// Recordings on the rooms thread (issue 38): the requests and REST operations, the engine's end of a recording,
/// and the start of a process (recordings the previous one left become interrupted).
extension RoomsService {
    /// Sets the engine that records (nil: recording is refused) and closes what a previous process left: this node's
    /// recordings still `recording` become `interrupted`, with the manifest the engine found for each (by recording
    /// id; the engine's `closeInterrupted` finished their files), and their rooms hear room:recording off. Recordings
    /// other nodes are running show in their rooms' join replies. Any thread but the rooms thread; call before serving.
    public func useRecordingEngine(_ engine: (any RecordingEngine)?, interruptedManifests: [String: [UInt8]] = [:]) throws {
        let node = cluster?.nodeID
        let found: Result<[RecordingRecord], Error> = thread.submitAndWait { [self] in
            Result {
                let recordings = rules.recordings
                recordings.engine = engine
                recordings.node = node
                let running = try store.read { try $0.runningRecordings() }
                for record in running {
                    if let room = state.rooms[record.roomID], record.stoppedAt == nil {
                        room.recording = ActiveRecording(id: record.id, byMemberID: nil, startedAt: record.startedAt)
                    }
                }
                // Ours whose engine is gone with the previous process, stop asked or not.
                return try store.read { try $0.recordingsLeftBehind(by: node) }
            }
        }
        for record in try found.get() {
            submit(.recordingEnded(recordingID: record.id, reason: RecordingEndReason.interrupted,
                                   manifest: interruptedManifests[record.id] ?? []))
        }
        thread.submitAndWait { [self] in self.drain() }
    }

    /// Called by the engine (any thread) once a recording has ended, asked to or by itself (`reason`: disk-full,
    /// max-duration, failed, …), with its final manifest.json (empty: none). On the rooms thread the row gets its
    /// state, duration and manifest; a recording that stopped by itself sends room:recording off with the reason;
    /// the recording_ready webhook follows.
    public func recordingEnded(recordingID: String, reason: String, manifestJSON: [UInt8]) {
        submit(.recordingEnded(recordingID: recordingID, reason: reason, manifest: manifestJSON))
    }

    func endRecording(_ recordingID: String, reason: String, manifest: [UInt8], _ step: inout Step) throws {
        assertOnRoomsThread()
        guard let record = try step.store.recording(id: recordingID), record.state == .recording else { return }
        let parsed = manifest.isEmpty ? nil : JSONValue.parse(manifest)
        let ended: RecordingState = switch (reason, parsed?["state"]?.stringValue) {
        case (RecordingEndReason.failed, _): .failed
        case (RecordingEndReason.interrupted, _), (_, RecordingState.interrupted.rawValue?): .interrupted
        default: .complete
        }
        let room = state.rooms[record.roomID]
        if rules.recordings.runningHere[record.roomID] == recordingID { rules.recordings.runningHere[record.roomID] = nil }
        let summary = try room?.summary ?? step.store.room(id: record.roomID).map { RoomSummary(id: $0.id, name: $0.name, displayName: $0.displayName) }
        if try step.store.stopRecording(id: recordingID, at: clock.now(), reason: reason) {
            // Nobody asked: it stopped by itself (or with the previous process).
            if let room { try step.context(of: room).recordingStoppedItself(recordingID, reason: reason, &step) }
            if let summary, let stopped = try step.store.recording(id: recordingID) {
                step.batch.notices.append(.recording(.stopped, room: summary, recording: stopped.json))
            }
        }
        let duration = parsed?["duration_ms"]?.intValue.map(Int64.init)
        try step.store.finishRecording(id: recordingID, state: ended, durationMs: duration,
                                       manifest: parsed == nil ? nil : String(decoding: manifest, as: UTF8.self))
        if let summary, let finished = try step.store.recording(id: recordingID) {
            step.batch.notices.append(.recording(.ready, room: summary, recording: finished.json))
        }
        logger.info("recording ended", ["recording": recordingID, "room": record.roomID, "reason": reason, "state": ended.rawValue])
    }

    /// Rooms re-read after a failure (a command or the whole batch did not commit) get the recording their rows say
    /// runs: the re-read room carries its recording over from memory, where a start or stop that failed left its mark.
    func reloadRecordings(_ roomIDs: Set<String>) {
        assertOnRoomsThread()
        guard !roomIDs.isEmpty, let running = try? store.read({ try $0.runningRecordings() }) else { return }
        var byRoom: [String: RecordingRecord] = [:]
        for record in running where record.stoppedAt == nil { byRoom[record.roomID] = record }
        for roomID in roomIDs {
            guard let room = state.rooms[roomID] else { continue }
            guard let record = byRoom[roomID] else {
                room.recording = nil
                continue
            }
            if room.recording?.id != record.id { room.recording = ActiveRecording(id: record.id, byMemberID: nil, startedAt: record.startedAt) }
        }
    }

    /// room:record:start / stop. With several nodes the recording runs on the room's media home, where the audio is:
    /// a start elsewhere makes this node the home if the room has none, else it is refused naming the home.
    func serveRecording(_ cid: String, start: Bool, recordingID: String?, for caller: Caller, _ step: inout Step) throws {
        let room = try step.openRoom(cid)
        if start { try requireMediaHome(room, &step) }
        try room.serveRecording(start: start, recordingID: recordingID, for: caller, &step)
    }

    private func requireMediaHome(_ room: LiveRoom, _ step: inout Step) throws {
        guard room.recording == nil, rules.recordings.forwardsAudio else { return }  // refused with its own reason
        if let home = try mediaSessions.homes.remoteHome(of: room.id, &step) {
            throw RoomError(.roomRecordingUnavailable, "room \(room.id)'s audio is served by node \(home): start the recording there")
        }
    }

    func runRecording(_ operation: Operation, _ step: inout Step) throws -> JSONValue {
        assertOnRoomsThread()
        switch operation {
        case .startRecording(let roomID, let requester):
            let room = try step.openRoom(roomID)
            try requireMediaHome(room, &step)
            return try room.recordOverHTTP(start: true, recordingID: nil, by: requester, &step)
        case .stopRecording(let roomID, let recordingID, let requester):
            guard let record = try step.store.recording(id: recordingID), record.roomID == roomID else {
                throw RoomError(.recordingNotFound, "no recording \(recordingID) in room \(roomID)")
            }
            return try step.openRoom(roomID).recordOverHTTP(start: false, recordingID: recordingID, by: requester, &step)
        case .listRecordings(let roomID, let requester):
            try checkReadable(roomID, by: requester, step)
            return .array(try step.store.recordings(roomID: roomID).map(\.json))
        case .findRecording(let recordingID, let requester):
            let record = try readableRecording(recordingID, by: requester, step)
            return ["recording": record.json, "directory": .string(rules.recordings.directory(of: recordingID)),
                    "here": .bool(record.node == rules.recordings.node)]
        case .deleteRecording(let recordingID, let requester):
            let record = try readableRecording(recordingID, by: requester, step, toDelete: true)
            guard record.state != .recording else {
                throw RoomError(.recordingInProgress, "recording \(recordingID) is still being recorded: stop it first")
            }
            try step.store.deleteRecording(id: recordingID)
            return ["directory": .string(rules.recordings.directory(of: recordingID)), "here": .bool(record.node == rules.recordings.node)]
        case .expireRecordings:
            let days = Int64(configuration.recordingRetentionDays)
            guard days > 0 else { return ["directories": []] }
            // This node's, and those of nodes gone (a node's id is new at each start: its files may well be here);
            // a live node deletes its own.
            let live = try step.store.liveNodes()
            let expired = try step.store.finishedRecordings(startedBefore: clock.now() - days * 86_400_000, limit: 100)
                .filter { $0.node == rules.recordings.node || $0.node.map { live?.contains($0) == false } ?? true }
            for record in expired { try step.store.deleteRecording(id: record.id) }
            return ["directories": .array(expired.map { .string(rules.recordings.directory(of: $0.id)) })]
        default:
            return .object([:])
        }
    }

    private func readableRecording(_ recordingID: String, by requester: Requester, _ step: Step, toDelete: Bool = false) throws -> RecordingRecord {
        guard let record = try step.store.recording(id: recordingID) else {
            throw RoomError(.recordingNotFound, "no recording with id \(recordingID)")
        }
        try checkReadable(record.roomID, by: requester, step, toDelete: toDelete)
        return record
    }

    /// Admins; the room's creator and moderators (kept after the room closed); with --recordings-access members, its
    /// joined members (deleting stays the creator's, moderators' and admins').
    private func checkReadable(_ roomID: String, by requester: Requester, _ step: Step, toDelete: Bool = false) throws {
        guard case .user(let user) = requester else { return }
        if let room = state.rooms[roomID] {
            let access = toDelete ? RecordingsAccess.moderators : configuration.recordingsAccess
            if let user, room.mayReadRecordings(user.id, access: access) { return }
        } else {
            guard let stored = try step.store.room(id: roomID) else { throw RoomError.notFound(roomID) }
            if let user {
                if stored.createdBy == user.id { return }
                let role = stored.mode == .stage ? try step.store.stage(roomID: roomID, at: clock.now()).roles[user.id]?.role : nil
                if role == .moderator { return }
            }
        }
        throw RoomError(.roomForbidden, "only an admin, the room's creator or its moderators can see room \(roomID)'s recordings")
    }
}
