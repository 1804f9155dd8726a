import Foundation
import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorProtocol
import ParlorRooms
import ParlorStore

/// Recordings over HTTP (issue 38): start and stop a room's (an admin, the room's creator or a stage room's
/// moderator), list them and download their files (also --recordings-access members' current members), delete one.
/// Who may is decided on the rooms thread (RoomsService+Recording.swift); the files are read and removed off the loop.
extension Routes {
    func registerRecordingRoutes(_ routes: inout RouterBuilder) {
        routes.post("/rooms/{id}/recordings", startRecording)
        routes.get("/rooms/{id}/recordings", listRecordings)
        routes.delete("/rooms/{id}/recordings/{rid}", stopRecording)
        routes.get("/recordings/{rid}/{file}", recordingFile)
        routes.delete("/recordings/{rid}", deleteRecording)
    }

    /// 201 with the recording as listed.
    func startRecording(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard let requester = try recordingRequester(request, context, route: { startRecording }) else { return .pending }
        return perform(.startRecording(roomID: context.parameter("id"), by: requester), context, status: 201)
    }

    /// 200 `{"recording_id": …}`; the row is complete once the engine has finished the files.
    func stopRecording(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard let requester = try recordingRequester(request, context, route: { stopRecording }) else { return .pending }
        return perform(.stopRecording(roomID: context.parameter("id"), recordingID: context.parameter("rid"), by: requester), context,
                       status: 200)
    }

    /// 200 with the room's recordings, newest first, as a bare array.
    func listRecordings(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard let requester = try recordingRequester(request, context, route: { listRecordings }) else { return .pending }
        return perform(.listRecordings(roomID: context.parameter("id"), by: requester), context, status: 200)
    }

    /// 204 once the row is gone; the directory is removed after it (a crash between leaves files, never a row
    /// without them).
    func deleteRecording(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard let requester = try recordingRequester(request, context, route: { deleteRecording }) else { return .pending }
        let executor = self.executor
        rooms.perform(.deleteRecording(recordingID: context.parameter("rid"), by: requester)) { result in
            switch result {
            case .success(let body):
                executor.write {
                    // Its files are wherever they were written: here if this machine has the directory.
                    if let directory = body["directory"]?.stringValue { try? FileManager.default.removeItem(atPath: directory) }
                    context.respond(HTTPResponse(status: 204))
                }
            case .failure(let error): context.respond(Self.httpError(error))
            }
        }
        return .pending
    }

    /// One of a recording's files: mix.opus, track-N.opus (audio/ogg) or manifest.json. Any other name is refused
    /// before anything is looked up, so no request names a path of its own. Streamed from disk (`RecordingDownload`):
    /// `Content-Length` is the file's size when the response starts (a file still being written is served up to
    /// there), and one `Range: bytes=…` is answered with 206.
    func recordingFile(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        let file = context.parameter("file")
        guard RecordingRecord.isFileName(file) else {
            throw HTTPError(.recordingInvalidFile, title: "Bad Request",
                            detail: "a recording's files are mix.opus, track-N.opus and manifest.json")
        }
        // A download another node proxies here (RecordingProxy.swift) is signed by it, not a user's; it is served
        // only from this node's disk, never proxied on.
        let proxied = request.head.headers[NodeProxyAuth.header] != nil
        let requester: Requester
        if proxied {
            guard let auth = nodeProxyAuth, let value = request.head.headers[NodeProxyAuth.header],
                  auth.verify(value, method: request.head.method, path: request.head.path, now: NodeProxyAuth.nowSeconds) else {
                throw HTTPError(.recordingNodeAuthInvalid, title: "Forbidden",
                                detail: "the node signature is forged, more than \(NodeProxyAuth.windowSeconds) s off, or not expected here")
            }
            requester = .admin
        } else {
            guard let user = try recordingRequester(request, context, route: { recordingFile }) else { return .pending }
            requester = user
        }
        let recordingID = context.parameter("rid")
        let range = request.head.headers["Range"]
        let (path, method) = (request.head.path, request.head.method)
        let (storage, auth) = (self.storage, proxied ? nil : nodeProxyAuth)
        rooms.perform(.findRecording(recordingID: recordingID, by: requester)) { result in
            switch result {
            case .success(let body):
                let directory = body["directory"]?.stringValue ?? ""
                let elsewhere = body["here"]?.boolValue == true ? nil : body["recording"]?["node"]?.stringValue
                // A node's id is new at each start, so the files of an earlier process of this node are looked for
                // here too, before any other node is asked.
                RecordingDownload.pool.submit {
                    context.complete {
                        if let size = RecordingFileSource.size(of: directory + "/" + file) {
                            return try Self.download(directory + "/" + file, size: size, range: range,
                                                     headers: Self.recordingFileHeaders(recordingID: recordingID, file: file))
                        }
                        guard let elsewhere else {
                            throw HTTPError(.recordingNotFound, title: "Not Found", detail: "recording \(recordingID) has no file \(file) (yet)")
                        }
                        guard let auth, let node = try? storage.node(elsewhere), node.alive, let url = node.url else {
                            throw HTTPError(.recordingNotFound, title: "Not Found",
                                            detail: "recording \(recordingID)'s files are on node \(elsewhere), which is not running or cannot be reached from here")
                        }
                        return try RecordingProxy.fetch(method: method, path: path, range: range, from: url, node: elsewhere, auth: auth)
                    }
                }
            case .failure(let error): context.respond(Self.httpError(error))
            }
        }
        return .pending
    }

    static func recordingFileHeaders(recordingID: String, file: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add("Content-Type", file.hasSuffix(".json") ? "application/json; charset=utf-8" : "audio/ogg")
        headers.add("Content-Disposition", "attachment; filename=\"\(recordingID)-\(file)\"")
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Accept-Ranges", "bytes")
        return headers
    }

    /// The file at `path`, of `size` bytes now: whole (200), the range asked for (206) or 416.
    static func download(_ path: String, size: Int, range: String?, headers: HTTPHeaders) throws -> RouteResult {
        var headers = headers
        switch ByteRange(header: range, size: size) {
        case .whole:
            return .stream(RecordingDownload.response(status: 200, headers: headers, length: size,
                                                      source: RecordingFileSource(path: path, offset: 0)))
        case .part(let start, let length):
            headers.add("Content-Range", "bytes \(start)-\(start + length - 1)/\(size)")
            return .stream(RecordingDownload.response(status: 206, headers: headers, length: length,
                                                      source: RecordingFileSource(path: path, offset: start)))
        case .unsatisfiable:
            var response = HTTPError(.recordingRangeNotSatisfiable, title: "Range Not Satisfiable",
                                     detail: "the file has \(size) bytes").response()
            response.headers.add("Content-Range", "bytes */\(size)")
            return .response(response)
        }
    }

    /// The admin token, or the token's user (401 without one). nil: the user is being loaded, the route runs again.
    private func recordingRequester(_ request: HTTPRequest, _ context: RequestContext, route: () -> RouteHandler) throws -> Requester? {
        if isAdmin(request) { return .admin }
        guard case .known(let identity) = try lookUpIdentity(request, context, route: route) else { return nil }
        return .user(try Authenticator.require(identity).user)
    }

    private func perform(_ operation: ParlorRooms.Operation, _ context: RequestContext, status: Int) -> RouteResult {
        rooms.perform(operation) { result in
            switch result {
            case .success(let body): context.respond(.json(body, status: status))
            case .failure(let error): context.respond(Self.httpError(error))
            }
        }
        return .pending
    }
}

/// Deletes finished recordings older than --recording-retention, at start and then hourly: the rooms thread deletes
/// their rows, then their directories are removed on a database thread.
final class RecordingRetention: Sendable {
    static let interval = TimeSpan.seconds(3600)

    static func start(rooms: RoomsService, loop: EventLoop, executor: DatabaseExecutor, logger: Logger) {
        loop.execute { run(rooms: rooms, loop: loop, executor: executor, logger: logger) }
    }

    private static func run(rooms: RoomsService, loop: EventLoop, executor: DatabaseExecutor, logger: Logger) {
        rooms.perform(.expireRecordings) { result in
            if case .success(let body) = result, case .array(let directories)? = body["directories"], !directories.isEmpty {
                executor.write {
                    for case .string(let directory) in directories { try? FileManager.default.removeItem(atPath: directory) }
                }
                logger.info("old recordings deleted", ["count": String(directories.count)])
            }
            // Up to 100 at a time: a backlog is taken again at once, else in an hour.
            let more = (body(of: result)?["directories"]).map { if case .array(let items) = $0 { items.count >= 100 } else { false } } ?? false
            loop.execute {
                _ = loop.schedule(after: more ? .seconds(1) : interval) { run(rooms: rooms, loop: loop, executor: executor, logger: logger) }
            }
        }
    }

    private static func body(of result: Result<JSONValue, RoomError>) -> JSONValue? {
        if case .success(let body) = result { return body }
        return nil
    }
}
