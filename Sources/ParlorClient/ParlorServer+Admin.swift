import Foundation

/// The HTTP routes for tools and tests: a room's members, and the admin routes (they need the server's admin token,
/// `--admin-token`; `dropMember` and `reset` need `--test-mode` as well).
extension ParlorServer {
    /// GET /rooms/{id}/members: the joined members, a page at a time (`pageSize` up to the server's maximum; the
    /// page's `cursor` gets the next). `role`: only the joined members with that role, in join order.
    public func members(roomID: String, pageSize: Int? = nil, role: MemberRole? = nil,
                        cursor: String? = nil) async throws(ParlorError) -> MembersPage {
        let parameters = [pageSize.map { "page_size=\($0)" }, role.map { "role=\($0.rawValue)" },
                          cursor.map { "cursor=" + Self.pathSegment($0) }].compactMap { $0 }
        let query = parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
        let response = try await http.send("GET", "/rooms/" + Self.pathSegment(roomID) + "/members" + query, token: token)
        return try MembersPage(json: try Self.success(response))
    }

    /// POST /rooms/{id}/members/{member}/drop (test mode): the server cuts that member's connections as a network
    /// failure would. Their session reconnects and resumes within the grace period; held away (see
    /// `ParlorSession.pauseReconnects`) past it, the others see member:left reason "dropped". Returns how many
    /// connections were cut.
    @discardableResult
    public func dropMember(roomID: String, memberID: String, adminToken: String) async throws(ParlorError) -> Int {
        let path = "/rooms/" + Self.pathSegment(roomID) + "/members/" + Self.pathSegment(memberID) + "/drop"
        let reply = try Self.success(try await http.send("POST", path, token: adminToken, json: .object([:])))
        return Int(reply["connections"]?.integerValue ?? 0)
    }

    /// POST /rooms/{id}/members/{member}/kick: ends the membership at once (member:left reason "kicked").
    public func kickMember(roomID: String, memberID: String, adminToken: String) async throws(ParlorError) {
        try await admin("/rooms/" + Self.pathSegment(roomID) + "/members/" + Self.pathSegment(memberID) + "/kick", adminToken)
    }

    /// POST /admin/reset (test mode): forgets every room, member and session; connected sessions are closed with
    /// 4004 and end with `session:error:server-reset`.
    public func reset(adminToken: String) async throws(ParlorError) {
        try await admin("/admin/reset", adminToken)
    }

    private func admin(_ path: String, _ adminToken: String) async throws(ParlorError) {
        let response = try await http.send("POST", path, token: adminToken, json: .object([:]))
        guard (200..<300).contains(response.status) else { throw ParlorError(body: response.json, status: response.status) }
    }
}
