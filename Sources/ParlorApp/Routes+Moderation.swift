import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import ParlorRooms

/// Stage-room moderation over HTTP, for the admin token and the room's creator (anyone else: 403
/// room:error:forbidden): lock, unlock, mute-all, a member's role, lowering a member's hand, bans. The same actions
/// as the WebSocket requests, with `by: null` in their events.
extension Routes {
    func registerModerationRoutes(_ routes: inout RouterBuilder) {
        routes.post("/rooms/{id}/lock", lockRoom)
        routes.post("/rooms/{id}/unlock", unlockRoom)
        routes.post("/rooms/{id}/mute-all", muteAll)
        routes.post("/rooms/{id}/members/{member}/role", setMemberRole)
        routes.post("/rooms/{id}/members/{member}/hand/lower", lowerMemberHand)
        routes.post("/rooms/{id}/bans", banUser)
    }

    func lockRoom(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try moderate(.lock(true), request, context, status: 204, route: { lockRoom })
    }

    func unlockRoom(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try moderate(.lock(false), request, context, status: 204, route: { unlockRoom })
    }

    /// 200 `{"muted": n}`.
    func muteAll(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try moderate(.muteAll, request, context, status: 200, route: { muteAll })
    }

    /// Body `{"role": "moderator" | "speaker" | "listener"}`.
    func setMemberRole(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        let body = try request.jsonObject()
        guard let value = body["role"], !value.isNull else { throw HTTPError.missingField("role") }
        guard let text = value.stringValue, let role = MemberRole(rawValue: text) else {
            throw HTTPError.invalidField("role", "must be moderator, speaker or listener")
        }
        return try moderate(.setRole(memberID: context.parameter("member"), role: role), request, context, status: 204,
                            route: { setMemberRole })
    }

    func lowerMemberHand(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try moderate(.lowerHand(memberID: context.parameter("member")), request, context, status: 204, route: { lowerMemberHand })
    }

    /// Body `{"user_id": "USR-…", "seconds": 600}` → 200 `{"until": "…"}`.
    func banUser(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        let body = try request.jsonObject()
        guard let user = body["user_id"], !user.isNull else { throw HTTPError.missingField("user_id") }
        guard let userID = user.stringValue, !userID.isEmpty, userID.utf8.count <= 256 else {
            throw HTTPError.invalidField("user_id", "must be a user id")
        }
        guard let seconds = body["seconds"], !seconds.isNull else { throw HTTPError.missingField("seconds") }
        guard let value = seconds.intValue, StageRules.banSeconds.contains(Int64(value)) else {
            throw HTTPError.invalidField("seconds", "must be a whole number from 1 to \(StageRules.banSeconds.upperBound)")
        }
        return try moderate(.ban(userID: userID, seconds: Int64(value)), request, context, status: 200, route: { banUser })
    }

    /// The admin token acts as admin; otherwise the token's user must be the room's creator (checked on the rooms thread).
    private func moderate(_ action: StageAction, _ request: HTTPRequest, _ context: RequestContext, status: Int,
                          route: () -> RouteHandler) throws -> RouteResult {
        let requester: Requester
        if isAdmin(request) {
            requester = .admin
        } else {
            guard case .known(let identity) = try lookUpIdentity(request, context, route: route) else { return .pending }
            requester = .user(try Authenticator.require(identity).user)
        }
        rooms.perform(.moderate(roomID: context.parameter("id"), action: action, by: requester)) { result in
            switch result {
            case .success(let body): context.respond(status == 204 ? HTTPResponse(status: 204) : .json(body, status: status))
            case .failure(let error): context.respond(Self.httpError(error))
            }
        }
        return .pending
    }
}
