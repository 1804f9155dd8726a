import Foundation

/// Recordings over HTTP (issue 38): start and stop (an admin, the room's creator or a stage room's moderator), list,
/// download a file, delete. A recording is returned as the server lists it (`id`, `state`, `files`, `manifest`, …).
extension ParlorServer {
    /// POST /rooms/{id}/recordings → the new recording.
    public func startRecording(roomID: String, adminToken: String? = nil) async throws(ParlorError) -> JSONValue {
        let response = try await http.send("POST", "/rooms/" + Self.pathSegment(roomID) + "/recordings", token: adminToken ?? token,
                                           json: .object([:]))
        return try Self.success(response)
    }

    /// DELETE /rooms/{id}/recordings/{rid}: stops it (its files are complete once the row's state is `complete`).
    public func stopRecording(_ recordingID: String, roomID: String, adminToken: String? = nil) async throws(ParlorError) {
        let response = try await http.send("DELETE", "/rooms/" + Self.pathSegment(roomID) + "/recordings/" + Self.pathSegment(recordingID),
                                           token: adminToken ?? token)
        _ = try Self.success(response)
    }

    /// GET /rooms/{id}/recordings: newest first.
    public func recordings(roomID: String, adminToken: String? = nil) async throws(ParlorError) -> [JSONValue] {
        let response = try await http.send("GET", "/rooms/" + Self.pathSegment(roomID) + "/recordings", token: adminToken ?? token)
        guard case .array(let items) = try Self.success(response) else { throw .invalidResponse("the recordings list is not an array") }
        return items
    }

    /// GET /recordings/{rid}/{file}: mix.opus, track-N.opus or manifest.json, as bytes.
    public func recordingFile(_ recordingID: String, file: String, adminToken: String? = nil) async throws(ParlorError) -> [UInt8] {
        let response = try await http.send("GET", "/recordings/" + Self.pathSegment(recordingID) + "/" + Self.pathSegment(file),
                                           token: adminToken ?? token)
        guard (200..<300).contains(response.status) else { throw ParlorError(body: response.json, status: response.status) }
        return response.body
    }

    /// DELETE /recordings/{rid}: its row and files (refused while it is being recorded).
    public func deleteRecording(_ recordingID: String, adminToken: String? = nil) async throws(ParlorError) {
        let response = try await http.send("DELETE", "/recordings/" + Self.pathSegment(recordingID), token: adminToken ?? token)
        guard (200..<300).contains(response.status) else { throw ParlorError(body: response.json, status: response.status) }
    }
}
