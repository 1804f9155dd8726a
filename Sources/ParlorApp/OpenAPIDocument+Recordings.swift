import ParlorProtocol

/// The recordings' routes (issue 38) in the OpenAPI document.
extension OpenAPIDocument {
    static let recordingParameter: JSONValue = ["name": "rid", "in": "path", "required": true, "schema": ["type": "string"]]

    static let recording: JSONValue = ["type": "object", "required": ["id", "room_id", "started_at", "state"], "properties": [
        "id": string, "room_id": string,
        "started_by": ["type": ["string", "null"], "description": "the user who started it; null: an admin"],
        "started_at": string, "stopped_at": ["type": ["string", "null"]],
        "state": ["enum": ["recording", "complete", "interrupted", "failed"]],
        "stop_reason": ["type": ["string", "null"], "description": "requested, disk-full, max-duration, failed, room-empty, room-closed, interrupted"],
        "duration_ms": ["type": ["integer", "null"]],
        "node": ["type": ["string", "null"], "description": "the node holding its files (several nodes on PostgreSQL)"],
        "manifest": ["type": ["object", "null"], "description": "manifest.json: speakers' tracks with offsets and durations"],
        "files": ["type": ["array", "null"], "items": string],
    ]]

    static let recordingOperations: [Operation] = [
        Operation(method: "POST", path: "/rooms/{id}/recordings", summary: "Start recording the room: room:recording with by null (admin, the room's creator, or a stage room's moderator); an end-to-end encrypted room is 409 room:error:encrypted",
                  success: (201, "The recording", recording), errors: [401, 403, 404, 409, 410], parameters: [idParameter], security: true),
        Operation(method: "GET", path: "/rooms/{id}/recordings", summary: "The room's recordings, newest first (admin, the room's creator and moderators; --recordings-access members: its members too)",
                  success: (200, "The recordings", ["type": "array", "items": recording]), errors: [401, 403, 404],
                  parameters: [idParameter], security: true),
        Operation(method: "DELETE", path: "/rooms/{id}/recordings/{rid}", summary: "Stop the room's recording: room:recording off (those who may start it)",
                  success: (200, "Stopping: the row is complete once the files are", ["type": "object"]), errors: [401, 403, 404, 409, 410],
                  parameters: [idParameter, recordingParameter], security: true),
        Operation(method: "GET", path: "/recordings/{rid}/{file}", summary: "A recording's file: mix.opus, track-N.opus (audio/ogg) or manifest.json; any other name is 400. Streamed with its Content-Length (its size when the answer starts); one Range: bytes=… is answered 206 with Content-Range, 416 past the end. Files another live node holds are fetched from it (502 naming it when it does not answer; 404 naming it when it is gone)",
                  success: (200, "The file", ["type": "string", "format": "binary"]), errors: [400, 401, 403, 404, 416, 502],
                  parameters: [recordingParameter, ["name": "file", "in": "path", "required": true, "schema": ["type": "string"]],
                               ["name": "Range", "in": "header", "required": false, "schema": ["type": "string"],
                                "description": "one range, bytes=a-b, bytes=a- or bytes=-n: 206 with that part"]],
                  security: true, successContentType: "audio/ogg"),
        Operation(method: "DELETE", path: "/recordings/{rid}", summary: "Delete a recording's row and files; 409 while it is being recorded (admin, the room's creator and moderators)",
                  success: (204, "Deleted", nil), errors: [401, 403, 404, 409], parameters: [recordingParameter], security: true),
        Operation(method: "GET", path: "/rooms/{id}/live.ogg",
                  summary: "The room's live mix as Ogg Opus, chunked, until the client leaves (at most 2 s behind): a current member's token (Authorization or ?token=) unless room:stream:public made it public; 404 naming the node that mixes it when that is another node; an end-to-end encrypted room is 409 room:error:encrypted",
                  success: (200, "The stream: OpusHead and OpusTags, then pages as they are mixed", ["type": "string", "format": "binary"]),
                  errors: [401, 403, 404, 409, 410], parameters: [idParameter, query("token", "a member's JWT, for players that cannot set headers")],
                  security: true, successContentType: "audio/ogg"),
    ]
}
