import Foundation

/// Admin routes a test or an operator tool drives: they need the server's admin token (`--admin-token`), and
/// `dropMember` needs `--test-mode` as well.
extension ParlorServer {
    /// POST /rooms/{id}/members/{member}/drop (test mode): the server cuts that member's connections as a network
    /// failure would. Their session reconnects and resumes within the grace period; held away (see
    /// `ParlorSession.pauseReconnects`) past it, the others see member:left reason "dropped".
    public func dropMember(roomID: String, memberID: String, adminToken: String) async throws(ParlorError) {
        try await admin("/rooms/" + Self.pathSegment(roomID) + "/members/" + Self.pathSegment(memberID) + "/drop", adminToken)
    }

    /// POST /rooms/{id}/members/{member}/kick: ends the membership at once (member:left reason "kicked").
    public func kickMember(roomID: String, memberID: String, adminToken: String) async throws(ParlorError) {
        try await admin("/rooms/" + Self.pathSegment(roomID) + "/members/" + Self.pathSegment(memberID) + "/kick", adminToken)
    }

    private func admin(_ path: String, _ adminToken: String) async throws(ParlorError) {
        let response = try await http.send("POST", path, token: adminToken, json: .object([:]))
        guard (200..<300).contains(response.status) else { throw ParlorError(body: response.json, status: response.status) }
    }
}
