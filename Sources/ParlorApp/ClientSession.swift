import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorProtocol
import ParlorRooms

/// One WebSocket client speaking Parlor's JSON protocol. It lives on the connection's loop thread: it checks each
/// request's shape, answers bad input itself, and hands the rest to the rooms thread, which replies in order.
final class ClientSession: WebSocketDelegate {
    private let rooms: RoomsService
    /// Knows this connection by the client's id until it closes.
    private let delivery: WebSocketDelivery
    /// The few settings a session reads. Not the whole `AppConfiguration`: stored inline in every session, that
    /// struct cost 10,000 connections 8.5 MiB.
    private let limits: Limits
    /// Who this is (user, session id, and the address per-address limits count, which a room ban holds too); nil
    /// once closed. The user and address live only here: copies beside it cost 10,000 sessions 0.5 MB.
    private var client: ClientRef?
    private let tokenExpiresAt: Int64
    private var expiryTimer: TimerID?
    private var messageBudget: TokenBucket?
    /// Requests handed to the rooms thread and not yet answered. Past `maxPendingRequests` the socket stops being
    /// read until answers catch up, so a client that floods requests slows itself down instead of growing our queues.
    private var pendingRequests = 0
    private var readingPaused = false
    static let maxPendingRequests = 64

    struct Limits: Sendable {
        let messagesPerSecond: Double
        let maxRequestBytes: Int
        let maxPageSize: Int
        let defaultPageSize: Int

        init(_ configuration: AppConfiguration) {
            messagesPerSecond = configuration.messagesPerSecond
            maxRequestBytes = configuration.maxRequestBytes
            maxPageSize = configuration.rooms.maxPageSize
            defaultPageSize = configuration.rooms.defaultPageSize
        }
    }

    init(client: ClientRef, tokenExpiresAt: Int64, rooms: RoomsService, delivery: WebSocketDelivery, limits: Limits) {
        self.client = client
        self.tokenExpiresAt = tokenExpiresAt
        self.rooms = rooms
        self.delivery = delivery
        self.limits = limits
        if limits.messagesPerSecond > 0 {
            messageBudget = TokenBucket(rate: limits.messagesPerSecond, burst: limits.messagesPerSecond * 2)
        }
    }

    func webSocketDidOpen(_ socket: WebSocketConnection) {
        guard let client else { return }
        rooms.connect(client)
        armExpiryTimer(socket)
    }

    /// A session lives no longer than its token: when it expires the client must get a new one and resume.
    /// Timers are armed for at most a day at a time; the token's exp is bounded (year 9999), so no product overflows.
    private func armExpiryTimer(_ socket: WebSocketConnection) {
        let (expiresAtMilliseconds, overflow) = tokenExpiresAt.multipliedReportingOverflow(by: 1000)
        let remaining = overflow ? Int64.max : max(0, expiresAtMilliseconds - Timestamp.nowMilliseconds())
        let step = min(remaining, 86_400_000)
        // Strong captures (a weak one would give the socket a side table and slow every retain of it on the fan-out
        // path); webSocketDidClose cancels the timer.
        expiryTimer = socket.connection.loop.schedule(after: .milliseconds(Int(step))) {
            if step < remaining {
                self.armExpiryTimer(socket)
            } else {
                socket.close(code: ParlorCloseCode.tokenExpired, reason: "token expired")
            }
        }
    }

    /// False (and the connection closed with 1008) when the client sends faster than its budget allows.
    private func withinBudget(_ socket: WebSocketConnection) -> Bool {
        guard messageBudget?.take() == nil else {
            rooms.metrics.rateLimited(.messages)
            socket.close(code: WebSocketCloseCode.policyViolation, reason: "rate limit: over \(Int(limits.messagesPerSecond)) messages per second")
            return false
        }
        return true
    }

    func webSocket(_ socket: WebSocketConnection, didReceiveText text: String) {
        guard let client, withinBudget(socket) else { return }
        guard text.utf8.count <= limits.maxRequestBytes else {
            socket.send(frame: ProtocolFrame.error(tid: .null, code: .requestTooLarge,
                                                   detail: "requests are limited to \(limits.maxRequestBytes) bytes"))
            return
        }
        let message: JSONValue
        do {
            message = try JSONParser.parse(Array(text.utf8))
        } catch {
            socket.send(frame: ProtocolFrame.error(tid: .null, code: .requestInvalidJSON, detail: "not valid JSON: \(error)"))
            return
        }
        guard case .object(let object) = message else {
            socket.send(frame: ProtocolFrame.error(tid: .null, code: .requestInvalidJSON, detail: "a request must be a JSON object"))
            return
        }
        let tid = object["tid"] ?? .null
        switch tid {
        case .string, .number, .null: break
        default:
            socket.send(frame: ProtocolFrame.error(tid: .null, code: .requestInvalidField, detail: "tid must be a string or a number"))
            return
        }
        guard let typeValue = object["type"] else {
            socket.send(frame: ProtocolFrame.error(tid: tid, code: .requestMissingField, detail: "type is required"))
            return
        }
        guard case .string(let type) = typeValue else {
            socket.send(frame: ProtocolFrame.error(tid: tid, code: .requestInvalidField, detail: "type must be a string"))
            return
        }
        let body: JSONObject
        switch object["body"] {
        case nil, .null?: body = JSONObject()
        case .object(let value)?: body = value
        case let other?:
            socket.send(frame: ProtocolFrame.error(tid: tid, code: .requestInvalidField, detail: "body must be an object, not \(other.typeName)", requestType: type))
            return
        }
        do {
            guard let request = try parseRequest(type: type, body: body) else {
                socket.send(frame: ProtocolFrame.error(tid: tid, code: .requestUnknownType, detail: "unknown request type \(type)", requestType: type))
                return
            }
            rooms.handle(request, tid: tid, from: client)
            pendingRequests += 1
            if pendingRequests >= Self.maxPendingRequests, !readingPaused {
                readingPaused = true
                socket.setReading(false)
            }
        } catch {
            socket.send(frame: ProtocolFrame.error(tid: tid, code: error.code, detail: error.detail, requestType: type))
        }
    }

    func webSocket(_ socket: WebSocketConnection, didReceiveBinary bytes: [UInt8]) {
        guard withinBudget(socket) else { return }
        socket.send(frame: ProtocolFrame.error(tid: .null, code: .requestBinaryUnsupported,
                                               detail: "requests are JSON text messages; binary messages are not understood"))
    }

    func webSocketDidSendReply(_ socket: WebSocketConnection) {
        pendingRequests = max(0, pendingRequests - 1)
        if readingPaused, pendingRequests <= Self.maxPendingRequests / 2 {
            readingPaused = false
            socket.setReading(true)
        }
    }

    func webSocketWantsReplayPage(_ socket: WebSocketConnection) {
        if let client { rooms.replayNext(client) }
    }

    /// Answers to requests read before the violation are already decided: let them out first, then close.
    func webSocket(_ socket: WebSocketConnection, violatedProtocolWith code: UInt16, reason: String) {
        guard let client else { return socket.close(code: code, reason: reason) }
        rooms.closeAfterReplies(client, code: code, reason: reason)
    }

    func webSocketDidClose(_ socket: WebSocketConnection, code: UInt16?, reason: String) {
        if let expiryTimer { socket.connection.loop.cancelTimer(expiryTimer) }
        expiryTimer = nil
        if let client {
            rooms.disconnected(client)
            delivery.unregister(client.id)
        }
        client = nil
    }

    private func parseRequest(type name: String, body: JSONObject) throws(FieldError) -> RoomRequest? {
        guard let type = RequestType(rawValue: name) else { return nil }
        let fields = ProtocolFields(body: body, maxPageSize: limits.maxPageSize, defaultPageSize: limits.defaultPageSize)
        switch type {
        case .sessionPing:
            return .ping
        case .conversationJoin:
            return .join(cid: try fields.string("cid"), e2ee: try fields.optionalBool("e2ee") ?? false)
        case .conversationLeave:
            return .leave(cid: try fields.string("cid"))
        case .conversationWatch:
            return .watch(cid: try fields.string("cid"))
        case .conversationUnwatch:
            return .unwatch(cid: try fields.string("cid"))
        case .conversationMembers:
            let cid = try fields.string("cid")
            var query = try ProtocolFields.membersFilter(order: try fields.optionalString("order"), state: try fields.optionalString("state")).get()
            query.pageSize = try fields.pageSize()
            query.cursor = try fields.cursor()
            query.handsRaised = try fields.optionalBool("hands") ?? false
            query.role = try ProtocolFields.memberRole(try fields.optionalString("role"), of: query).get()
            return .members(cid: cid, query: query)
        case .conversationEvents:
            let cid = try fields.string("cid")
            let since = try fields.optionalInt("since", in: 0...Int64.max / 2) ?? 0
            return .events(cid: cid, since: since, pageSize: try fields.pageSize())
        case .sessionResume:
            let sessionID = try fields.string("session_id")
            var lastEventIDs: [(cid: String, lastEventID: Int64)] = []
            switch body["last_event_ids"] {
            case nil, .null?: break
            case .object(let map)?:
                guard map.pairs.count <= 1000 else { throw .invalid("body.last_event_ids", "may name at most 1000 rooms") }
                for (cid, value) in map.pairs {
                    guard let id = value.intValue, id >= 0 else { throw .invalid("body.last_event_ids.\(cid)", "must be a whole number ≥ 0") }
                    lastEventIDs.append((cid, Int64(id)))
                }
            case let other?:
                throw .invalid("body.last_event_ids", "must be an object of room id to event id, not \(other.typeName)")
            }
            return .resume(sessionID: sessionID, lastEventIDs: lastEventIDs)
        case .rtcOffer, .rtcAnswer:
            let (cid, to) = (try fields.string("cid"), try fields.string("to"))
            guard case .string(let sdp)? = body["sdp"] else { throw .missing("body.sdp") }
            guard sdp.utf8.count <= Self.maxSDPBytes else { throw .invalid("body.sdp", "must be at most \(Self.maxSDPBytes) bytes") }
            return .signal(kind: type, cid: cid, to: to, payload: ["sdp": .string(sdp)])
        case .rtcIce:
            let (cid, to) = (try fields.string("cid"), try fields.string("to"))
            guard let candidate = body["candidate"] else { throw .missing("body.candidate") }
            switch candidate {
            case .object, .null: break
            default: throw .invalid("body.candidate", "must be an RTCIceCandidate object or null")
            }
            guard candidate.encoded().count <= Self.maxCandidateBytes else {
                throw .invalid("body.candidate", "must be at most \(Self.maxCandidateBytes) bytes")
            }
            return .signal(kind: type, cid: cid, to: to, payload: ["candidate": candidate])
        case .mediaOffer:
            let cid = try fields.string("cid")
            guard case .string(let sdp)? = body["sdp"] else { throw .missing("body.sdp") }
            guard sdp.utf8.count <= Self.maxSDPBytes else { throw .invalid("body.sdp", "must be at most \(Self.maxSDPBytes) bytes") }
            return .mediaOffer(cid: cid, sdp: sdp, e2ee: try fields.optionalBool("e2ee") ?? false)
        case .mediaClose: return .mediaClose(cid: try fields.string("cid"))
        case .audioEnable: return .media(cid: try fields.string("cid"), change: .enable)
        case .audioDisable: return .media(cid: try fields.string("cid"), change: .disable)
        case .audioMuteOn: return .media(cid: try fields.string("cid"), change: .mute(true))
        case .audioMuteOff: return .media(cid: try fields.string("cid"), change: .mute(false))
        case .audioSpeakingOn: return .media(cid: try fields.string("cid"), change: .speaking(true))
        case .audioSpeakingOff: return .media(cid: try fields.string("cid"), change: .speaking(false))
        case .memberHandRaise: return .stage(cid: try fields.string("cid"), action: .raiseHand)
        case .memberHandLower: return .stage(cid: try fields.string("cid"), action: .lowerHand(memberID: try fields.optionalString("member_id")))
        case .memberRole:
            let (cid, memberID) = (try fields.string("cid"), try fields.string("member_id"))
            return .stage(cid: cid, action: .setRole(memberID: memberID, role: try fields.role("role")))
        case .memberBan:
            let (cid, userID) = (try fields.string("cid"), try fields.string("user_id"))
            guard let seconds = try fields.optionalInt("seconds", in: StageRules.banSeconds) else { throw .missing("body.seconds") }
            return .stage(cid: cid, action: .ban(userID: userID, seconds: seconds))
        case .roomRecordStart: return .record(cid: try fields.string("cid"), start: true, recordingID: nil)
        case .roomRecordStop: return .record(cid: try fields.string("cid"), start: false, recordingID: try fields.optionalString("recording_id"))
        case .roomStreamPublic: return .streamPublic(cid: try fields.string("cid"), isPublic: try fields.bool("public"))
        case .roomMuteAll: return .stage(cid: try fields.string("cid"), action: .muteAll)
        case .roomLock: return .stage(cid: try fields.string("cid"), action: .lock(true))
        case .roomUnlock: return .stage(cid: try fields.string("cid"), action: .lock(false))
        case .messageSend:
            let cid = try fields.string("cid")
            if let value = body["ciphertext"], !value.isNull { return .stage(cid: cid, action: .message(try Self.ciphertext(value, besides: body["text"]))) }
            guard let value = body["text"], !value.isNull else { throw .missing("body.text") }
            guard case .string(let raw) = value else { throw .invalid("body.text", "must be a string, not \(value.typeName)") }
            switch TextRules.checkChat(raw) {
            case .success(let text): return .stage(cid: cid, action: .message(.text(text)))
            case .failure(let violation): throw FieldError(field: "body.text", rule: violation.rule, missing: false, code: .messageInvalidText)
            }
        case .reactionSend:
            let cid = try fields.string("cid")
            guard let value = body["emoji"], !value.isNull else { throw .missing("body.emoji") }
            guard case .string(let raw) = value, case .success(let emoji) = TextRules.checkReaction(raw) else {
                throw FieldError(field: "body.emoji", rule: "must be one emoji of at most 32 bytes", missing: false, code: .reactionInvalidEmoji)
            }
            return .stage(cid: cid, action: .reaction(emoji: emoji))
        case .e2eeKey:
            let cid = try fields.string("cid")
            // Only the size is the server's business: what the body says only the members can check.
            guard JSONValue.object(body).encoded().count <= TextRules.maxKeyBodyBytes else {
                throw FieldError(field: "body", rule: "must be at most \(TextRules.maxKeyBodyBytes) bytes of JSON", missing: false,
                                 code: .e2eeKeyTooLarge)
            }
            return .e2eeKey(cid: cid, body: body)
        }
    }

    /// message:send's `ciphertext` (an encrypted room's chat), which comes without `text`.
    private static func ciphertext(_ value: JSONValue, besides text: JSONValue?) throws(FieldError) -> ChatContent {
        guard text == nil || text?.isNull == true else { throw .invalid("body.text", "must be absent when ciphertext is sent") }
        guard case .string(let raw) = value, case .success(let ciphertext) = TextRules.checkCiphertext(raw) else {
            throw FieldError(field: "body.ciphertext", rule: "must be standard base64 (with padding) of 1 to \(TextRules.maxCiphertextCharacters) characters",
                             missing: false, code: .messageInvalidCiphertext)
        }
        return .ciphertext(ciphertext)
    }

    /// Signalling payload limits: an audio-only SDP is a few KiB; a candidate well under one.
    static let maxSDPBytes = 16 * 1024
    static let maxCandidateBytes = 2 * 1024
}

extension Routes {
    /// GET /ws: authenticate (401 before any upgrade), then speak the protocol. A token whose user is not cached
    /// upgrades once the write thread has loaded (or created) the user.
    func webSocket(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        // The token is not kept in the verified-token cache: a connection checks it once.
        guard case .known(let found) = try lookUpIdentity(request, context, rememberToken: false, route: { webSocket }) else { return .pending }
        let identity = try Authenticator.require(found)
        let (rooms, delivery) = (self.rooms, self.delivery)
        let limits = ClientSession.Limits(configuration)
        let address = ClientAddress.limitKey(context.clientAddress)
        let (user, expiresAt) = (identity.user, identity.claims.expiresAt)
        return .upgrade(WebSocketUpgrade { socket, _ in
            let client = ClientRef(id: delivery.register(socket.handle), sessionID: Identifier.make(Identifier.session), user: user,
                                   address: address)
            return ClientSession(client: client, tokenExpiresAt: expiresAt, rooms: rooms, delivery: delivery, limits: limits)
        })
    }
}
