import ParlorCodec
import ParlorProtocol

/// What a batch of commands produces: frames to send and completions to call, once the batch has committed.
struct Batch {
    typealias Command = RoomsService.Command

    var outbox = Outbox()
    var completions: [() -> Void] = []
    /// The rooms whose contexts its commands took (RoomContext.swift).
    var changed = ChangedRooms()
    /// Rooms whose memory may be ahead of the database after a failure, re-read once the transaction is over.
    var roomsToReload: Set<String> = []
    /// Rooms whose media sessions or senders may have changed without touching the room (a second connection
    /// closing, an offer): the media loop is brought up to date after the commit.
    var mediaRooms: Set<String> = []
    /// For the notice recorder (webhook outbox), inside the transaction.
    var notices: [RoomNotice] = []
    /// Recordings for the engine to start and stop after the commit (RoomRecordings.swift).
    var recordings = RecordingChanges()

    /// The success reply to a request; if the batch fails to commit, the caller gets an error instead (`failAll`).
    mutating func reply(to caller: Caller, _ type: RequestType, body: JSONValue) {
        outbox.reply(ProtocolMessage.success(type, tid: caller.tid, body: body), to: caller.client.id)
    }

    /// The success reply whose body is already encoded JSON.
    mutating func reply(to caller: Caller, _ type: RequestType, encodedBody: [UInt8]) {
        outbox.reply(ProtocolMessage.success(type, tid: caller.tid, encodedBody: encodedBody), to: caller.client.id)
    }

    /// For a burst that may exceed the connection's output limit; the connection paces it (see `sendPaced`).
    mutating func sendPacedEvent(_ message: [UInt8], to client: ClientRef) {
        outbox.sendPacedEvent(message, to: client.id)
    }

    mutating func send(_ message: [UInt8], to client: ClientRef) {
        outbox.send(message, to: client.id)
    }

    mutating func complete(_ command: Command, with result: JSONValue) {
        guard case .operation(_, let completion) = command else { return }
        completions.append { completion(.success(result)) }
    }

    mutating func merge(_ other: Batch) {
        outbox.append(other.outbox)
        completions += other.completions
        changed.merge(other.changed)
        mediaRooms.formUnion(other.mediaRooms)
        notices += other.notices
        recordings.append(other.recordings)
    }

    /// One command was refused: its requester gets the error now, in order with the rest.
    mutating func fail(_ command: Command, with error: RoomError) {
        switch command {
        case .request(let client, let tid, let request):
            outbox.reply(ProtocolMessage.error(tid: tid, error, requestType: request.type), to: client.id)
        case .operation(_, let completion):
            completions.append { completion(.failure(error)) }
        case .connect(let client):
            refuseSession(client, with: error)
        case .disconnected, .closeAfterReplies, .dropIfStillAway, .closeIfExpired, .sendAudience, .settle, .expireSessions, .mediaEvent,
             .cluster, .recordingEnded, .liveListeners, .sendStreamStatus:
            break
        }
    }

    /// A session that could not be recorded: an `error` message saying why, then close 1011, so the client does
    /// not wait for a session:success that will never come. (1013, try again later, would say it better, but
    /// RFC 6455 validators, ours included, refuse codes registered after it.)
    private mutating func refuseSession(_ client: ClientRef, with error: RoomError) {
        outbox.send(ProtocolMessage.error(tid: .null, error), to: client.id)
        outbox.close(client.id, code: WebSocketCloseCode.internalError, reason: "could not start the session, try again later")
    }

    /// The whole batch failed to commit: nothing it would have sent is true. Every command of it is answered
    /// with `error` instead, in order, whether it ran, was refused, or never ran (the transaction could not
    /// begin: PostgreSQL unreachable): a request gets an error reply, a connection its refusal, an operation
    /// its failure. Closes asked for still happen.
    mutating func failAll(_ commands: [Command], with error: RoomError) {
        outbox = Outbox()
        completions = []
        notices = []
        recordings = RecordingChanges()
        for command in commands {
            if case .closeAfterReplies(let client, let code, let reason) = command {
                outbox.close(client.id, code: code, reason: reason)
            } else {
                fail(command, with: error)
            }
        }
    }

    /// Queues one encoding of the event to every connection that receives the room's events.
    mutating func broadcast(_ event: EventRecord, in room: LiveRoom) {
        broadcast(ProtocolMessage.event(event), in: room)
    }

    /// Queues a room event's message to every connection that receives the room's events (counted as delivered).
    mutating func broadcast(_ message: [UInt8], in room: LiveRoom) {
        room.forEachConnection { outbox.sendEvent(message, to: $0) }
    }
}
