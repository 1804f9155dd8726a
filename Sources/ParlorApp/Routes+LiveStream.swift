import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import ParlorRooms

/// GET /rooms/{id}/live.ogg (issue 38): the room's mix as chunked Ogg Opus, for players without WebRTC. A current
/// member's token (Authorization: Bearer, or ?token= for players that cannot set headers; query strings never reach
/// the access log) unless the stream is public; the rooms thread decides (RoomsService+LiveStream.swift).
extension Routes {
    func registerLiveStreamRoutes(_ routes: inout RouterBuilder) {
        routes.get("/rooms/{id}/live.ogg", liveStream)
    }

    func liveStream(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        guard let liveStreams else {
            throw HTTPError(.roomStreamUnavailable, title: "Conflict", detail: "this server forwards no audio (--media mesh): rooms have no live stream")
        }
        guard case .known(let identity) = try lookUpIdentity(request, context, route: { liveStream }) else { return .pending }
        let roomID = context.parameter("id")
        let userID = identity?.user.id
        rooms.perform(.liveStreamAccess(roomID: roomID, userID: userID)) { result in
            switch result {
            case .success:
                context.complete {
                    .stream(HTTPStreamResponse(headers: Self.liveHeaders, started: { liveStreams.add($0, to: roomID, userID: userID) },
                                               ended: { writer, _ in liveStreams.remove(writer, from: roomID) }))
                }
            case .failure(let error): context.respond(Self.httpError(error))
            }
        }
        return .pending
    }

    static let liveHeaders = HTTPHeaders([("Content-Type", "audio/ogg"), ("Cache-Control", "no-cache, no-store"),
                                          ("X-Content-Type-Options", "nosniff")])
}
