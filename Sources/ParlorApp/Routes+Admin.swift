import ParlorCodec
import ParlorHTTP
import ParlorRooms

/// Room control: closing a room (its creator or an admin), and with PARLOR_ADMIN_TOKEN set, kick and mute;
/// with --test-mode too, wiping all data and forcing a member's connections to drop.
extension Routes {
    func registerAdminRoutes(_ routes: inout RouterBuilder) {
        routes.delete("/rooms/{id}", closeRoom)
        guard configuration.adminToken != nil else { return }
        routes.get("/metrics", metrics)
        routes.post("/rooms/{id}/members/{member}/kick", kickMember)
        routes.post("/rooms/{id}/members/{member}/mute", muteMember)
        routes.post("/users/{name}/revoke", revokeTokens)
        guard configuration.testMode else { return }
        routes.post("/rooms/{id}/members/{member}/drop", dropMember)
        routes.post("/admin/reset", resetAll)
    }

    /// True when the request's Authorization header carries the admin token (compared in constant time). Never
    /// `?token=`: a query string ends up in logs, browser history and Referer headers.
    func isAdmin(_ request: HTTPRequest) -> Bool {
        guard let adminToken = configuration.adminToken, let authorization = request.head.headers["Authorization"] else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return ConstantTime.equal(Array(parts[1].trimmingSpaces.utf8), Array(adminToken.utf8))
    }

    func requireAdmin(_ request: HTTPRequest) throws(HTTPError) {
        guard isAdmin(request) else {
            throw HTTPError(.authAdminRequired, title: "Forbidden",
                            detail: "this route needs Authorization: Bearer <PARLOR_ADMIN_TOKEN>")
        }
    }

    /// DELETE /rooms/{id}: members get member:left reason room_closed, then the room is gone from GET /rooms.
    func closeRoom(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        let requester: Requester
        if isAdmin(request) {
            requester = .admin
        } else {
            guard case .known(let identity) = try lookUpIdentity(request, context, route: { closeRoom }) else { return .pending }
            requester = .user(try Authenticator.require(identity).user)
        }
        return perform(.closeRoom(roomID: context.parameter("id"), by: requester), context, status: 204)
    }

    func kickMember(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try requireAdmin(request)
        return perform(.kick(roomID: context.parameter("id"), memberID: context.parameter("member")), context, status: 204)
    }

    func muteMember(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try requireAdmin(request)
        return perform(.mute(roomID: context.parameter("id"), memberID: context.parameter("member")), context, status: 204)
    }

    /// Refuses every token issued until now to the user's identities (the name's own and any separate ones of that
    /// name), blocks them for --revoke-block seconds (POST /auth answers 403 auth:error:blocked), and in the same
    /// operation ends their memberships (member:left reason kicked) and closes their sessions (4003 "token revoked").
    /// The users are written on the write thread.
    func revokeTokens(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try requireAdmin(request)
        let (name, blockMilliseconds) = (context.parameter("name"), configuration.revokeBlockSeconds * 1000)
        return onWriter(context) {
            let revoked: [User]
            do {
                revoked = try users.revokeTokens(name: name, blockMilliseconds: blockMilliseconds)
            } catch {
                throw HTTPError.internalError("could not revoke the tokens")
            }
            return perform(.disconnectUser(userIDs: Set(revoked.map(\.id)), reason: "token revoked"), context, status: 200)
        }
    }

    func dropMember(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try requireAdmin(request)
        return perform(.dropConnections(roomID: context.parameter("id"), memberID: context.parameter("member")), context, status: 200)
    }

    func resetAll(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        try requireAdmin(request)
        let users = self.users
        rooms.perform(.reset) { result in
            users.forgetAll()
            switch result {
            case .success: context.respond(HTTPResponse(status: 204))
            case .failure(let error): context.respond(Self.httpError(error))
            }
        }
        return .pending
    }

    private func perform(_ operation: Operation, _ context: RequestContext, status: Int) -> RouteResult {
        rooms.perform(operation) { result in
            switch result {
            case .success(let body): context.respond(status == 204 ? HTTPResponse(status: 204) : .json(body, status: status))
            case .failure(let error): context.respond(Self.httpError(error))
            }
        }
        return .pending
    }
}

/// Comparisons whose time does not depend on where the inputs differ.
enum ConstantTime {
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        // The whole length difference counts: truncating it to 8 bits let 256 extra NULs compare equal.
        var difference = a.count ^ b.count
        for index in 0..<max(a.count, b.count) {
            difference |= Int((index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0))
        }
        return difference == 0
    }
}
