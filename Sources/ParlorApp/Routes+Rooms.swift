import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import ParlorRooms

extension Routes {
    /// GET /rooms: open rooms, newest first, as a bare array (the tutorial decodes `[RoomResponse]`). A page the
    /// cache holds is answered on the loop; otherwise it is read on a read thread.
    func listRooms(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard case .known(let identity) = try lookUpIdentity(request, context, route: { listRooms }) else { return .pending }
        _ = try user(identity)
        let (size, cursor) = (try pageSize(request), try self.cursor(request))
        let key = RoomListCache.Key(pageSize: size, cursor: request.head.query["cursor"])
        let version = rooms.roomsVersion
        if let cached = roomListCache.entry(key, version: version) { return .response(roomList(request, cached)) }
        return onReader(context) {
            let page = try read { try $0.openRooms(pageSize: size, cursor: cursor) }
            let entry = RoomListCache.Entry(body: JSONValue.array(page.items.map(\.json)).encoded(), next: page.next?.encoded)
            roomListCache.store(entry, for: key, version: version)
            return .response(roomList(request, entry))
        }
    }

    private func roomList(_ request: HTTPRequest, _ entry: RoomListCache.Entry) -> HTTPResponse {
        var headers = linkHeader(request, next: entry.next)
        headers.add("Content-Type", "application/json; charset=utf-8")
        return HTTPResponse(status: 200, headers: headers, body: entry.body)
    }

    /// POST /rooms `{"display_name":"Friday chat"}` → 201 with the room (its `id` is what the tutorial reads).
    func createRoom(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard case .known(let identity) = try lookUpIdentity(request, context, route: { createRoom }) else { return .pending }
        let creator = try user(identity)
        let address = ClientAddress.limitKey(context.clientAddress)
        if let wait = roomCreationLimiter?.check(address) {
            rooms.metrics.rateLimited(.roomCreate)
            throw HTTPError(.roomRateLimited, title: "Too many requests",
                            detail: "too many rooms created from your address; retry in \(wait) s",
                            headers: HTTPHeaders([("Retry-After", String(wait))]))
        }
        let body = try request.jsonObject()
        let displayName = try FieldRules.requiredText("display_name", in: body, min: 1, max: 100)
        var name: String?
        if let rawName = body["name"], !rawName.isNull {
            guard case .string(let text) = rawName else { throw HTTPError.invalidField("name", "must be a string") }
            guard text.utf8.count >= 1, text.utf8.count <= 64,
                  text.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F || ($0 >= 0x41 && $0 <= 0x5A) }) else {
                throw HTTPError.invalidField("name", "must be 1 to 64 letters, digits, '-' or '_'")
            }
            name = text
        }
        var ttl: Int64?
        var maxMembers: Int64?
        var mode = RoomMode.open
        var e2ee = false
        if let rawProperties = body["properties"], !rawProperties.isNull {
            guard case .object(let properties) = rawProperties else { throw HTTPError.invalidField("properties", "must be an object") }
            if let value = properties["ttl"], !value.isNull {
                let maxTTL = configuration.rooms.maxRoomTTL
                guard let seconds = value.intValue, seconds >= 0, Int64(seconds) <= maxTTL else {
                    throw HTTPError.invalidField("properties.ttl", "must be a whole number of seconds from 0 to \(maxTTL) (--max-room-ttl)")
                }
                ttl = Int64(seconds)
            }
            if let value = properties["max_members"], !value.isNull {
                guard let count = value.intValue, (1...100_000).contains(count) else {
                    throw HTTPError.invalidField("properties.max_members", "must be a whole number from 1 to 100000")
                }
                maxMembers = Int64(count)
            }
            if let value = properties["mode"], !value.isNull {
                guard let text = value.stringValue, let parsed = RoomMode(rawValue: text) else {
                    throw HTTPError.invalidField("properties.mode", "must be open or stage")
                }
                mode = parsed
            }
            if let value = properties["e2ee"], !value.isNull {
                guard case .bool(let flag) = value else { throw HTTPError.invalidField("properties.e2ee", "must be true or false") }
                e2ee = flag
            }
        }
        // A stage room's creator moderates it; without a creator its first joiner would (issue 34, item 13).
        if mode == .stage, creator == nil {
            throw HTTPError(.authTokenRequired, title: "Unauthorized",
                            detail: "creating a stage room needs a token from POST /auth (its creator moderates it)",
                            headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
        }
        var room = NewRoom(name: name, displayName: displayName, ttl: ttl, maxMembers: maxMembers, createdBy: creator,
                           createdFrom: address)
        room.mode = mode
        room.e2ee = e2ee
        rooms.perform(.createRoom(room)) { result in
            switch result {
            case .success(let record):
                let location = HTTPHeaders([("Location", "/rooms/\(record["id"]?.stringValue ?? "")")])
                context.respond(.json(record, status: 201, headers: location))
            case .failure(let error): context.respond(Self.httpError(error))
            }
        }
        return .pending
    }

    /// GET /rooms/{id}
    func getRoom(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard case .known(let identity) = try lookUpIdentity(request, context, route: { getRoom }) else { return .pending }
        _ = try user(identity)
        let id = context.parameter("id")
        return onReader(context) { .response(.json(try existingRoom(id).json)) }
    }

    /// GET /rooms/{id}/members: the same page shape as conversation:members.
    func listMembers(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard case .known(let identity) = try lookUpIdentity(request, context, route: { listMembers }) else { return .pending }
        return try withVisibleRoom(context.parameter("id"), identity, context) { room in
            let (size, cursor) = (try pageSize(request), try self.cursor(request))
            let query = try ProtocolFields.membersFilter(order: request.head.query["order"], state: request.head.query["state"])
                .mapError { HTTPError.invalidField($0.field, $0.rule) }.get()
            let hands = try Self.handsFilter(request.head.query["hands"])
            var filter = query
            filter.handsRaised = hands
            let role = try ProtocolFields.memberRole(request.head.query["role"], of: filter).mapError { HTTPError.invalidField("role", $0.rule) }.get()
            let page = try read {
                if let role { return try $0.joinedMembers(roomID: room.id, role: role, pageSize: size, cursor: cursor) }
                return hands ? try $0.raisedHands(roomID: room.id, pageSize: size, cursor: cursor) : try $0.members(roomID: room.id, state: query.allStates ? nil : (query.state ?? .joined), descending: query.descending,
                               pageSize: size, cursor: cursor)
            }
            var body: JSONObject = ["cid": .string(room.id), "members": .array(page.items.map(\.json))]
            if let next = page.next { body["cursor"] = .string(next.encoded) }
            return .response(.json(.object(body), headers: linkHeader(request, next: page.next?.encoded)))
        }
    }

    /// `?hands=true`: only members whose hand is up, in the order they raised it.
    static func handsFilter(_ value: String?) throws(HTTPError) -> Bool {
        switch value?.lowercased() {
        case nil, "false", "0": return false
        case "true", "1": return true
        default: throw HTTPError.invalidField("hands", "must be true or false")
        }
    }

    /// GET /rooms/{id}/events?since=N: the same page shape as conversation:events.
    func listEvents(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard case .known(let identity) = try lookUpIdentity(request, context, route: { listEvents }) else { return .pending }
        return try withVisibleRoom(context.parameter("id"), identity, context) { room in
            let size = try pageSize(request)
            var since: Int64 = 0
            if let text = request.head.query["since"] {
                guard let value = Int64(text), value >= 0 else { throw HTTPError.invalidField("since", "must be a whole number ≥ 0") }
                since = value
            }
            let page = try read { try $0.events(roomID: room.id, since: since, pageSize: size) }
            var body: JSONObject = ["cid": .string(room.id), "events": .array(page.items.map(\.json))]
            let next = page.next.map { String($0.number) }
            if let next { body["cursor"] = .string(next) }
            return .response(.json(.object(body), headers: linkHeader(request, next: next, parameter: "since")))
        }
    }

    /// Runs `body` on a read thread with the room whose members or history the request may read: with members-only
    /// visibility its token's user must be or have been a member (401 without a token, 403 `member:error:not-joined`
    /// otherwise).
    private func withVisibleRoom(_ id: String, _ identity: Authenticator.Identity?, _ context: RequestContext,
                                 _ body: @escaping @Sendable (RoomRecord) throws -> RouteResult) throws(HTTPError) -> RouteResult {
        guard configuration.resolvedRoomVisibility == .members else {
            _ = try user(identity)
            return onReader(context) { try body(try existingRoom(id)) }
        }
        let user = try Authenticator.require(identity).user
        return onReader(context) {
            let room = try existingRoom(id)
            guard try read({ try $0.hasMembership(userID: user.id, roomID: room.id) }) else {
                throw HTTPError(.memberNotJoined, title: "Forbidden",
                                detail: "only members of room \(room.id) may read its members and history on this server")
            }
            return try body(room)
        }
    }

    private func existingRoom(_ id: String) throws(HTTPError) -> RoomRecord {
        guard let room = try read({ try $0.room(id: id) }) else {
            throw HTTPError.notFound(.roomNotFound, "no room with id \(id)")
        }
        return room
    }

    static func httpError(_ error: RoomError) -> HTTPError {
        HTTPError(error.code, title: HTTPResponse.reasonPhrase(error.code.httpStatus), detail: error.detail)
    }
}
