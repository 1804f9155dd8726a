import ParlorCodec
import ParlorProtocol

extension RoomsService {
    /// What a batch of commands produces: frames to send and completions to call, once the batch has committed.
    struct Batch {
        var outbox = Outbox()
        var completions: [() -> Void] = []
        var touchedRooms: Set<String> = []
        /// Rooms whose memory may be ahead of the database after a failure, re-read once the transaction is over.
        var roomsToReload: Set<String> = []
        /// Rooms whose media sessions or senders may have changed without touching the room (a second connection
        /// closing, an offer): the media loop is brought up to date after the commit.
        var mediaRooms: Set<String> = []
        /// For the observer, only once committed.
        var notices: [RoomNotice] = []
        /// Where each command's reply goes, so a failed commit can tell every waiter.
        private var waiters: [(ClientRef, JSONValue, RequestType)] = []
        private var failedCompletions: [(RoomError) -> Void] = []
        /// Connections greeted with session:success in this batch: if it fails they are told and closed instead.
        var greeted: [ClientRef] = []

        /// The success reply to a request; if the batch fails to commit, the caller gets an error instead.
        mutating func reply(to caller: Caller, _ type: RequestType, body: JSONValue) {
            outbox.reply(ProtocolFrame.success(type, tid: caller.tid, body: body), to: caller.client.handle)
            waiters.append((caller.client, caller.tid, type))
        }

        /// The success reply whose body is already encoded JSON.
        mutating func reply(to caller: Caller, _ type: RequestType, encodedBody: [UInt8]) {
            outbox.reply(ProtocolFrame.success(type, tid: caller.tid, encodedBody: encodedBody), to: caller.client.handle)
            waiters.append((caller.client, caller.tid, type))
        }

        /// For a burst that may exceed the connection's output limit; the connection paces it (see `sendPaced`).
        mutating func sendPacedEvent(_ frame: [UInt8], to client: ClientRef) {
            outbox.sendPacedEvent(frame, to: client.handle)
        }

        mutating func send(_ frame: [UInt8], to client: ClientRef) {
            outbox.send(frame, to: client.handle)
        }

        mutating func complete(_ command: Command, with result: JSONValue) {
            guard case .operation(_, let completion) = command else { return }
            completions.append { completion(.success(result)) }
            failedCompletions.append { completion(.failure($0)) }
        }

        mutating func merge(_ other: Batch) {
            outbox.append(other.outbox)
            completions += other.completions
            touchedRooms.formUnion(other.touchedRooms)
            mediaRooms.formUnion(other.mediaRooms)
            notices += other.notices
            waiters += other.waiters
            failedCompletions += other.failedCompletions
            greeted += other.greeted
        }

        /// One command was refused: its requester gets the error now, in order with the rest.
        mutating func fail(_ command: Command, with error: RoomError) {
            switch command {
            case .request(let client, let tid, let request):
                outbox.reply(ProtocolFrame.error(tid: tid, error, requestType: request.type), to: client.handle)
            case .operation(_, let completion):
                completions.append { completion(.failure(error)) }
            case .connect(let client):
                refuseSession(client, with: error)
            case .disconnected, .closeAfterReplies, .dropIfStillAway, .closeIfExpired, .settle, .expireSessions, .mediaEvent,
                 .cluster:
                break
            }
        }

        /// A session that could not be recorded: an `error` frame saying why, then close 1011, so the client does
        /// not wait for a session:success that will never come. (1013, try again later, would say it better, but
        /// RFC 6455 validators, ours included, refuse codes registered after it.)
        private mutating func refuseSession(_ client: ClientRef, with error: RoomError) {
            outbox.send(ProtocolFrame.error(tid: .null, error), to: client.handle)
            outbox.close(client.handle, code: WebSocketCloseCode.internalError, reason: "could not start the session, try again later")
        }

        /// The whole batch failed to commit: nothing it would have sent is true, so send errors instead.
        mutating func failAll(with error: RoomError) {
            var errors = Outbox()
            for (client, tid, type) in waiters {
                errors.reply(ProtocolFrame.error(tid: tid, error, requestType: type), to: client.handle)
            }
            outbox = errors
            for client in greeted { refuseSession(client, with: error) }
            greeted = []
            completions = failedCompletions.map { fail in { fail(error) } }
            notices = []
        }
    }
}
