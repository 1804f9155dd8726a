import ParlorCodec
import ParlorHTTP
import ParlorProtocol

/// The OpenAPI 3.1 description of the HTTP API, served at /openapi.json and kept in docs/openapi.json
/// (a test checks that the two match and that every route the router knows is described with its errors).
enum OpenAPIDocument {
    struct Operation {
        let method: String
        let path: String
        let summary: String
        let success: (status: Int, description: String, schema: JSONValue?)
        let errors: [Int]
        var requestBody: JSONValue? = nil
        var parameters: [JSONValue] = []
        var security = false
        var successContentType = "application/json"
    }

    static let errorSchema: JSONValue = ["$ref": "#/components/schemas/Error"]
    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/\(name)")] }
    static func query(_ name: String, _ description: String, integer: Bool = false) -> JSONValue {
        ["name": .string(name), "in": "query", "required": false, "description": .string(description),
         "schema": ["type": integer ? "integer" : "string"]]
    }
    static let idParameter: JSONValue = ["name": "id", "in": "path", "required": true, "schema": ["type": "string"]]
    static let memberParameter: JSONValue = ["name": "member", "in": "path", "required": true, "schema": ["type": "string"]]
    static let paging = [query("page_size", "1 to 1000 (default 100)", integer: true), query("cursor", "from the previous page")]

    static let operations: [Operation] = [
        Operation(method: "POST", path: "/auth", summary: "Get a token for a name (the user is created on first use; a name in use needs its claim, see docs/protocol.md)",
                  success: (200, "The token", ref("AuthResponse")), errors: [400, 403, 413, 429],
                  requestBody: ref("AuthRequest")),
        Operation(method: "GET", path: "/rooms", summary: "Open rooms, newest first; a bare array, next page in the Link header",
                  success: (200, "Rooms", ["type": "array", "items": ref("Room")]), errors: [400, 401], parameters: paging),
        Operation(method: "POST", path: "/rooms", summary: "Create a room (a token, when sent, records the creator; a stage room needs one: 401 auth:error:token-required); rooms per client address and properties.ttl are capped",
                  success: (201, "The room", ref("Room")), errors: [400, 401, 409, 413, 429, 503], requestBody: ref("CreateRoomRequest")),
        Operation(method: "GET", path: "/rooms/{id}", summary: "One room, open or closed",
                  success: (200, "The room", ref("Room")), errors: [401, 404], parameters: [idParameter]),
        Operation(method: "DELETE", path: "/rooms/{id}", summary: "Close a room: members get member:left reason room_closed (creator or admin)",
                  success: (204, "Closed", nil), errors: [401, 403, 404, 410], parameters: [idParameter], security: true),
        Operation(method: "GET", path: "/rooms/{id}/members", summary: "Members of a room, same page shape as conversation:members",
                  success: (200, "A page of members", ref("MembersPage")), errors: [400, 401, 403, 404],
                  parameters: [idParameter, query("order", "asc or desc"), query("state", "JOINED, LEFT or ALL"),
                               query("hands", "true: only joined members whose hand is up, in the order they raised it"),
                               query("role", "moderator, speaker or listener: only joined members with that role, in join order (how a big stage room's audience pages on from the join reply's audience_cursor); takes no order, state or hands")] + paging),
        Operation(method: "GET", path: "/rooms/{id}/events", summary: "A room's history, same page shape as conversation:events",
                  success: (200, "A page of events", ref("EventsPage")), errors: [400, 401, 403, 404],
                  parameters: [idParameter, query("since", "return events with ids above this", integer: true),
                               query("page_size", "1 to 1000 (default 100)", integer: true)]),
        Operation(method: "POST", path: "/rooms/{id}/members/{member}/kick", summary: "End a membership with reason kicked (admin)",
                  success: (204, "Kicked", nil), errors: [403, 404, 410], parameters: [idParameter, memberParameter], security: true),
        Operation(method: "POST", path: "/rooms/{id}/members/{member}/mute", summary: "Mute a member (admin)",
                  success: (204, "Muted", nil), errors: [403, 404, 410], parameters: [idParameter, memberParameter], security: true),
        Operation(method: "POST", path: "/rooms/{id}/lock", summary: "Lock a room: joins by new users get room:error:locked; members may still resume (admin or the room's creator)",
                  success: (204, "Locked", nil), errors: [401, 403, 404, 410], parameters: [idParameter], security: true),
        Operation(method: "POST", path: "/rooms/{id}/unlock", summary: "Unlock a room (admin or the room's creator)",
                  success: (204, "Unlocked", nil), errors: [401, 403, 404, 410], parameters: [idParameter], security: true),
        Operation(method: "POST", path: "/rooms/{id}/mute-all", summary: "Mute every member sending audio unmuted: audio:mute:on with by null (admin or the room's creator)",
                  success: (200, "How many members were muted", ref("MuteAllResponse")), errors: [401, 403, 404, 410],
                  parameters: [idParameter], security: true),
        Operation(method: "POST", path: "/rooms/{id}/members/{member}/role", summary: "Set a member's role: member:role; promotion lowers the hand, demotion turns audio off (admin or the room's creator)",
                  success: (204, "Set", nil), errors: [400, 401, 403, 404, 409, 410, 413], requestBody: ref("RoleRequest"),
                  parameters: [idParameter, memberParameter], security: true),
        Operation(method: "POST", path: "/rooms/{id}/members/{member}/hand/lower", summary: "Lower a member's hand: member:hand (admin or the room's creator)",
                  success: (204, "Lowered", nil), errors: [401, 403, 404, 410], parameters: [idParameter, memberParameter], security: true),
        Operation(method: "POST", path: "/rooms/{id}/bans", summary: "Ban a user (and the client addresses it connected from lately, even after it left) from the room for some seconds; its member leaves with reason kicked (admin or the room's creator)",
                  success: (200, "Banned", ref("BanResponse")), errors: [400, 401, 403, 404, 410, 413], requestBody: ref("BanRequest"),
                  parameters: [idParameter], security: true),
        Operation(method: "POST", path: "/users/{name}/revoke", summary: "Refuse the user's tokens issued so far, block /auth for it (--revoke-block), end its memberships and close its sessions (admin)",
                  success: (200, "How many connections were closed", nil), errors: [403],
                  parameters: [["name": "name", "in": "path", "required": true, "schema": ["type": "string"]]], security: true),
        Operation(method: "GET", path: "/metrics", summary: "Prometheus metrics, text format 0.0.4 (admin; without a token, scrape --metrics-address instead); see docs/metrics.md",
                  success: (200, "The metrics", ["type": "string"]), errors: [403], security: true,
                  successContentType: "text/plain; version=0.0.4"),
        Operation(method: "POST", path: "/rooms/{id}/members/{member}/drop", summary: "Test mode: close a member's connections like a network failure (admin)",
                  success: (200, "How many connections were closed", nil), errors: [403, 404, 410],
                  parameters: [idParameter, memberParameter], security: true),
        Operation(method: "POST", path: "/admin/reset", summary: "Test mode: delete all data; connected sessions are closed with 4004 (admin)",
                  success: (204, "Wiped", nil), errors: [403], security: true),
        Operation(method: "GET", path: "/healthz", summary: "200 when the database answers and writes get through; 503 with a detail otherwise (a full disk too)",
                  success: (200, "Healthy", ["type": "object"]), errors: [503]),
        Operation(method: "GET", path: "/ws", summary: "Upgrade to the WebSocket protocol (docs/protocol.md); token as ?token= or Bearer",
                  success: (101, "Switching protocols", nil), errors: [400, 401, 403, 426], parameters: [query("token", "a JWT from /auth")]),
        Operation(method: "GET", path: "/openapi.json", summary: "This document",
                  success: (200, "OpenAPI 3.1", ["type": "object"]), errors: [404]),
    ] + recordingOperations + WebClientFiles.files.keys.sorted().map { path in
        Operation(method: "GET", path: path, summary: path == "/" ? "The built-in web client" : "A file of the built-in web client",
                  success: (200, WebClientFiles.files[path]?.contentType ?? "", nil), errors: [404])
    }

    static func document() -> JSONValue {
        var paths = JSONObject()
        for operation in operations {
            var responses = JSONObject()
            var success: JSONObject = ["description": .string(operation.success.description)]
            if let schema = operation.success.schema { success["content"] = [operation.successContentType: ["schema": schema]] }
            responses[String(operation.success.status)] = .object(success)
            for status in operation.errors {
                responses[String(status)] = ["description": .string(HTTPResponse.reasonPhrase(status)),
                                             "content": ["application/json": ["schema": errorSchema]]]
            }
            var entry: JSONObject = ["summary": .string(operation.summary), "responses": .object(responses)]
            if !operation.parameters.isEmpty { entry["parameters"] = .array(operation.parameters) }
            if let body = operation.requestBody {
                entry["requestBody"] = ["required": true, "content": ["application/json": ["schema": body]]]
            }
            if operation.security { entry["security"] = [["bearer": []]] }
            var path = paths[operation.path]?.objectValue ?? JSONObject()
            path[operation.method.lowercased()] = .object(entry)
            paths[operation.path] = .object(path)
        }
        return [
            "openapi": "3.1.0",
            "info": ["title": "Parlor", "version": "1.0.0",
                     "description": "Self-hosted drop-in audio rooms. Live membership travels over the WebSocket at /ws: see docs/protocol.md."],
            "paths": .object(paths),
            "components": ["schemas": schemas, "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"]]],
        ]
    }

    static let string: JSONValue = ["type": "string"]
    static let integer: JSONValue = ["type": "integer"]

    static let schemas: JSONValue = [
        "Error": ["type": "object", "required": ["code", "title", "detail"],
                  "properties": ["code": string, "title": string, "detail": string,
                                 "request_id": ["type": "string", "description": "the request's id, also in the X-Request-Id response header and the access log"]]],
        "AuthRequest": ["type": "object", "required": ["name"], "properties": [
            "name": ["type": "string", "minLength": 1, "maxLength": 64,
                     "description": "trimmed and NFC-normalised; at most 256 bytes; no control, bidirectional-control, invisible or tag characters; at most 8 combining marks in a row"],
            "code": ["type": "string", "description": "the access code (--access code)"],
            "claim": ["type": "string", "description": "the claim an earlier /auth for this name returned: gets that identity back while the name is in use"],
        ]],
        "AuthResponse": ["type": "object", "required": ["name", "jwt"], "properties": [
            "name": string, "jwt": string, "user_id": string, "expires_at": string,
            "claim": ["type": "string", "description": "keep it with the name and send it on the next /auth; without it, a name in use (connected, within its grace period, or the creator or a moderator of a room still open) gets a separate identity with the same name"],
        ]],
        "CreateRoomRequest": ["type": "object", "required": ["display_name"], "properties": [
            "display_name": ["type": "string", "minLength": 1, "maxLength": 100, "description": "the user-name rules, with at most 400 bytes"],
            "name": ["type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"],
            "properties": ["type": "object", "properties": ["ttl": integer, "max_members": integer, "mode": [
                "enum": ["open", "stage"], "description": "stage: its creator moderates, so it needs a token (401 auth:error:token-required)"],
                "e2ee": ["type": "boolean", "description": "end-to-end encrypted (docs/e2ee.md), for the room's whole life: joins and media offers must state \"e2ee\": true, chat is ciphertext, recording is refused (409 room:error:encrypted)"]]],
        ]],
        "Room": ["type": "object", "required": ["id", "display_name"], "properties": [
            "id": string, "name": string, "display_name": string, "created_at": string, "created_by": ["type": ["string", "null"]],
            "member_count": integer, "last_event_id": integer, "closed_at": string, "locked": ["type": "boolean"],
            "properties": ["type": "object", "properties": ["ttl": integer, "max_members": ["type": ["integer", "null"]],
                                                            "mode": ["enum": ["open", "stage"]], "e2ee": ["type": "boolean"]]],
        ]],
        "Member": ["type": "object", "properties": [
            "member_id": string, "state": ["enum": ["JOINED", "LEFT"]],
            "user": ["type": "object", "properties": ["id": string, "name": string]],
            "timestamp": ["type": "object", "properties": ["joined": string, "left": string]],
            "media": ["type": "object", "properties": ["audio_settings": ["type": "object", "properties": ["enabled": ["type": "boolean"], "muted": ["type": "boolean"]]]]],
            "role": ["enum": ["moderator", "speaker", "listener"]], "hand_raised": ["type": "boolean"],
            "hand_raised_at": ["type": ["string", "null"]],
        ]],
        "RoleRequest": ["type": "object", "required": ["role"], "properties": ["role": ["enum": ["moderator", "speaker", "listener"]]]],
        "BanRequest": ["type": "object", "required": ["user_id", "seconds"], "properties": [
            "user_id": string, "seconds": ["type": "integer", "minimum": 1, "maximum": 2_592_000],
        ]],
        "BanResponse": ["type": "object", "properties": ["until": string]],
        "MuteAllResponse": ["type": "object", "properties": ["muted": integer]],
        "Event": ["type": "object", "properties": [
            "type": string, "cid": string, "id": integer, "from": ["type": ["string", "null"]], "timestamp": string, "body": ["type": "object"],
        ]],
        "MembersPage": ["type": "object", "properties": ["cid": string, "members": ["type": "array", "items": ref("Member")], "cursor": string]],
        "EventsPage": ["type": "object", "properties": ["cid": string, "events": ["type": "array", "items": ref("Event")], "cursor": string]],
    ]
}

extension Routes {
    func openAPI(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        .response(.json(OpenAPIDocument.document()))
    }
}

/// The OpenAPI document as pretty JSON text, for `parlor openapi` (which writes docs/openapi.json).
public func openAPIDocumentText() -> String {
    OpenAPIDocument.document().prettyPrinted()
}
