import Foundation

/// Stage-room moderation over HTTP, for the room's creator (the server's token) or an admin (`adminToken`).
extension ParlorServer {
    /// POST /rooms/{id}/lock or /unlock.
    public func setLocked(_ locked: Bool, roomID: String, adminToken: String? = nil) async throws(ParlorError) {
        _ = try await moderate("/rooms/" + Self.pathSegment(roomID) + (locked ? "/lock" : "/unlock"), adminToken)
    }

    /// POST /rooms/{id}/mute-all: returns how many members were muted.
    @discardableResult
    public func muteAll(roomID: String, adminToken: String? = nil) async throws(ParlorError) -> Int {
        Int(try await moderate("/rooms/" + Self.pathSegment(roomID) + "/mute-all", adminToken)["muted"]?.integerValue ?? 0)
    }

    /// POST /rooms/{id}/members/{member}/role.
    public func setRole(_ role: MemberRole, memberID: String, roomID: String, adminToken: String? = nil) async throws(ParlorError) {
        _ = try await moderate("/rooms/" + Self.pathSegment(roomID) + "/members/" + Self.pathSegment(memberID) + "/role", adminToken,
                               ["role": .string(role.rawValue)])
    }

    /// POST /rooms/{id}/members/{member}/hand/lower.
    public func lowerHand(memberID: String, roomID: String, adminToken: String? = nil) async throws(ParlorError) {
        _ = try await moderate("/rooms/" + Self.pathSegment(roomID) + "/members/" + Self.pathSegment(memberID) + "/hand/lower", adminToken)
    }

    /// POST /rooms/{id}/bans: returns when the ban ends.
    @discardableResult
    public func ban(userID: String, roomID: String, seconds: Int, adminToken: String? = nil) async throws(ParlorError) -> Date? {
        let reply = try await moderate("/rooms/" + Self.pathSegment(roomID) + "/bans", adminToken,
                                       ["user_id": .string(userID), "seconds": JSONValue(seconds)])
        return reply["until"]?.stringValue.flatMap(ISO8601.parse)
    }

    /// GET /rooms/{id}/members?hands=true: joined members whose hand is up, in the order they raised it.
    public func raisedHands(roomID: String, pageSize: Int? = nil) async throws(ParlorError) -> MembersPage {
        let query = "?hands=true" + (pageSize.map { "&page_size=\($0)" } ?? "")
        let response = try await http.send("GET", "/rooms/" + Self.pathSegment(roomID) + "/members" + query, token: token)
        return try MembersPage(json: try Self.success(response))
    }

    private func moderate(_ path: String, _ adminToken: String?, _ body: [String: JSONValue] = [:]) async throws(ParlorError) -> JSONValue {
        let response = try await http.send("POST", path, token: adminToken ?? token, json: .object(JSONObject(sortingKeysOf: body)))
        guard (200..<300).contains(response.status) else { throw ParlorError(body: response.json, status: response.status) }
        return response.status == 204 ? .object([:]) : (response.json ?? .object([:]))
    }
}
