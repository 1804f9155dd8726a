import ParlorProtocol

/// Recording a room (issue 38): who may, one recording at a time, and the room:recording events. The row and the
/// event are written in the command's transaction; the engine hears of it after the commit (`RecordingObserver`).
extension RoomContext {
    /// Starts recording the room; `actor` nil: over REST. Returns the reply's body.
    func startRecording(by actor: LiveMember?, userID: String?, _ step: inout Step) throws -> JSONValue {
        try room.refuseIfEncrypted("record")
        if let running = room.recording {
            throw RoomError(.roomRecordingActive, "room \(room.id) is already being recorded (\(running.id))")
        }
        let recordings = rules.recordings
        try recordings.checkCanRecord(room.id)
        let now = rules.clock.now()
        let id = Identifier.makeTimeOrdered(Identifier.recording, milliseconds: now)
        let record = RecordingRecord(id: id, roomID: room.id, startedBy: userID, startedAt: now, node: recordings.node)
        try store.insertRecording(record)
        room.recording = ActiveRecording(id: id, byMemberID: actor?.id, startedAt: now)
        let event = try appendEvent(type: EventType.roomRecording.rawValue, from: actor?.id,
                                    body: ["on": .bool(true), "by": actor.idOrNull, "recording_id": .string(id)], at: now)
        step.batch.broadcast(event, in: room)
        step.batch.notices.append(.recording(.started, room: room.summary, recording: record.json))
        step.batch.recordings.starts.append(recordings.start(id, roomID: room.id))
        rules.logger.info("recording started", ["room": room.id, "recording": id])
        return ["recording_id": .string(id), "started_at": .string(Timestamp.iso8601(milliseconds: now))]
    }

    /// Stops the room's recording (`recordingID` nil: whichever runs): by request (`reason` nil), or because the room
    /// emptied or closed (`reason` says so, `by` is null). The engine is told after the commit.
    @discardableResult
    func stopRecording(_ recordingID: String? = nil, by actor: LiveMember?, reason: String?, _ step: inout Step) throws -> JSONValue {
        guard let running = room.recording, recordingID == nil || recordingID == running.id else {
            throw RoomError(.roomNotRecording, recordingID.map { "recording \($0) is not running in room \(room.id)" }
                ?? "room \(room.id) is not being recorded")
        }
        let now = rules.clock.now()
        _ = try store.stopRecording(id: running.id, at: now, reason: reason ?? RecordingEndReason.requested)
        room.recording = nil
        var body: JSONObject = ["on": .bool(false), "by": actor.idOrNull, "recording_id": .string(running.id)]
        if let reason { body["reason"] = .string(reason) }
        let event = try appendEvent(type: EventType.roomRecording.rawValue, from: actor?.id, body: .object(body), at: now)
        step.batch.broadcast(event, in: room)
        if let record = try store.recording(id: running.id) {
            step.batch.notices.append(.recording(.stopped, room: room.summary, recording: record.json))
        }
        step.batch.recordings.stops.append(running.id)
        rules.logger.info("recording stopped", ["room": room.id, "recording": running.id, "reason": reason ?? RecordingEndReason.requested])
        return ["recording_id": .string(running.id)]
    }

    /// The recording stopped by itself (the engine's reason): the room hears room:recording off with the reason.
    func recordingStoppedItself(_ recordingID: String, reason: String, _ step: inout Step) throws {
        guard room.recording?.id == recordingID else { return }
        room.recording = nil
        let event = try appendEvent(type: EventType.roomRecording.rawValue, from: nil,
                                    body: ["on": .bool(false), "by": .null, "recording_id": .string(recordingID), "reason": .string(reason)],
                                    at: rules.clock.now())
        step.batch.broadcast(event, in: room)
    }
}

/// Who may record, and the requests that check it before they take the room's context.
extension LiveRoom {
    /// A stage room's moderators and the room's creator start and stop its recordings.
    func mayRecord(_ userID: String) -> Bool {
        createdBy == userID || (mode == .stage && role(of: userID) == .moderator)
    }

    /// Who may list and download its recordings: those who may record, and with --recordings-access members
    /// its joined members.
    func mayReadRecordings(_ userID: String, access: RecordingsAccess) -> Bool {
        mayRecord(userID) || (access == .members && member(forUser: userID) != nil)
    }

    /// room:record:start / room:record:stop from a member.
    func serveRecording(start: Bool, recordingID: String?, for caller: Caller, _ step: inout Step) throws {
        guard let member = member(forUser: caller.user.id) else { throw RoomError.notJoined(id) }
        guard mayRecord(caller.user.id) else {
            throw RoomError(.memberNotAllowed, mode == .stage ? "only a moderator of room \(id) may record it"
                : "only the creator of room \(id) may record it")
        }
        let context = step.context(of: self)
        let body = start ? try context.startRecording(by: member, userID: caller.user.id, &step)
            : try context.stopRecording(recordingID, by: member, reason: nil, &step)
        step.batch.reply(to: caller, start ? .roomRecordStart : .roomRecordStop, body: body)
    }

    /// POST or DELETE /rooms/{id}/recordings over REST: an admin, the room's creator or (stage) a moderator.
    func recordOverHTTP(start: Bool, recordingID: String?, by requester: Requester, _ step: inout Step) throws -> JSONValue {
        var userID: String?
        if case .user(let user) = requester {
            guard let user, mayRecord(user.id) else {
                throw RoomError(.roomForbidden, "only an admin, the room's creator or a moderator can record room \(id)")
            }
            userID = user.id
        }
        let context = step.context(of: self)
        if start {
            _ = try context.startRecording(by: nil, userID: userID, &step)
            return try step.store.recording(id: recording?.id ?? "")?.json ?? .object([:])
        }
        return try context.stopRecording(recordingID, by: nil, reason: nil, &step)
    }
}
