/// The HTTP routes for tools and tests: a room's members, and the admin routes of a test-mode server.
extension ParlorServer {
    /// GET /rooms/{id}/members: the joined members (the server's first page; `pageSize` up to its maximum).
    public func members(roomID: String, pageSize: Int? = nil) async throws(ParlorError) -> MembersPage {
        let query = pageSize.map { "?page_size=\($0)" } ?? ""
        let response = try await http.send("GET", "/rooms/" + Self.pathSegment(roomID) + "/members" + query, token: token)
        return try MembersPage(json: try Self.success(response))
    }

    /// POST /rooms/{id}/members/{member}/drop (test mode, admin token): cuts the member's connections without a
    /// close frame, as a network failure would. Returns how many connections were cut.
    @discardableResult
    public func dropConnections(roomID: String, memberID: String, adminToken: String) async throws(ParlorError) -> Int {
        let path = "/rooms/" + Self.pathSegment(roomID) + "/members/" + Self.pathSegment(memberID) + "/drop"
        let reply = try Self.success(try await http.send("POST", path, token: adminToken, json: .object([:])))
        return Int(reply["connections"]?.integerValue ?? 0)
    }

    /// POST /admin/reset (test mode, admin token): forgets every room, member and session; connected sessions
    /// are closed with 4004 and end with `session:error:server-reset`.
    public func reset(adminToken: String) async throws(ParlorError) {
        let response = try await http.send("POST", "/admin/reset", token: adminToken, json: .object([:]))
        guard (200..<300).contains(response.status) else { throw ParlorError(body: response.json, status: response.status) }
    }
}
