import Foundation

/// Where the server is: host, port, whether it speaks TLS, and an optional path prefix (for a server behind a
/// path-routing proxy).
struct ServerEndpoint: Sendable, Hashable {
    let host: String
    let port: Int
    /// "" or "/prefix", never ending in "/".
    let basePath: String
    /// https:// or wss://: every HTTP call and the WebSocket go over verified TLS, never plain.
    var usesTLS = false

    var hostHeader: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
}

/// A Parlor server: the HTTP routes (auth, rooms) and `connect` for the live WebSocket session.
///
/// `https://` and `wss://` URLs use TLS with the certificate verified against the system's CA store, or against the
/// CA in `configuration.tls` (a LAN server's self-signed certificate); a TLS failure is `client:error:tls`, never
/// a fallback to plain. `http://` and `ws://` are plain.
public struct ParlorServer: Sendable {
    let endpoint: ServerEndpoint
    public var configuration: ParlorClientConfiguration
    /// Sent as `Authorization: Bearer` on the HTTP calls (rooms are then created by this user); nil: anonymous.
    public var token: String?
    /// The claim secret of each name this server value (and its copies) authenticated, sent again by `auth(name:)`.
    private let claims = Locked<[String: String]>([:])

    public var host: String { endpoint.host }
    public var port: Int { endpoint.port }

    /// Whether the server is reached over TLS (an https:// or wss:// URL, or `tls: true`).
    public var usesTLS: Bool { endpoint.usesTLS }

    /// `http://host:port`, `ws://host:port`, or with TLS `https://…` and `wss://…` (a path becomes a prefix of every
    /// route). Without a port: 80 plain, 443 with TLS.
    public init(url: URL, token: String? = nil, configuration: ParlorClientConfiguration = .init()) throws(ParlorError) {
        let scheme = url.scheme?.lowercased() ?? ""
        let tls = scheme == "https" || scheme == "wss"
        guard tls || scheme == "http" || scheme == "ws" else {
            throw ParlorError(code: ParlorError.Code.invalidURL,
                              detail: "the URL must start with http://, https://, ws:// or wss://, not \(url.absoluteString)")
        }
        guard let host = url.host, !host.isEmpty else {
            throw ParlorError(code: ParlorError.Code.invalidURL, detail: "no host in \(url.absoluteString)")
        }
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        endpoint = ServerEndpoint(host: bareHost, port: url.port ?? (tls ? 443 : 80), basePath: path, usesTLS: tls)
        self.token = token
        self.configuration = configuration
    }

    /// `tls`: as an https:// URL (verified against `configuration.tls`).
    public init(host: String, port: Int = 8080, tls: Bool = false, token: String? = nil,
                configuration: ParlorClientConfiguration = .init()) {
        endpoint = ServerEndpoint(host: host, port: port, basePath: "", usesTLS: tls)
        self.token = token
        self.configuration = configuration
    }

    var http: HTTPExchange { HTTPExchange(endpoint: endpoint, timeout: configuration.requestTimeout, trust: configuration.tls) }

    // MARK: HTTP

    /// POST /auth: a token for `name` (the user is created on first use).
    ///
    /// The answer's `claim` proves this identity on the next /auth for the name: while the name is in use (a
    /// connected session, or a membership within its grace period), the server gives its identity back only with
    /// the claim, and anyone without it gets a separate identity shown with the same name. This value keeps the
    /// claim of each name and sends it on every later `auth(name:)`; pass `claim` to use one kept elsewhere (an
    /// app's keychain, across launches).
    public func auth(name: String, claim: String? = nil) async throws(ParlorError) -> AuthResponse {
        var body: [String: JSONValue] = ["name": .string(name)]
        if let kept = claim ?? claims.withLock({ $0[name] }) { body["claim"] = .string(kept) }
        let response = try await http.send("POST", "/auth", token: nil, json: .object(JSONObject(sortingKeysOf: body)))
        let answer = try AuthResponse(json: try Self.success(response))
        if let granted = answer.claim {
            claims.withLock { kept in
                kept[name] = granted
                kept[answer.name] = granted
            }
        }
        return answer
    }

    /// GET /rooms: the open rooms, newest first (the server's first page; `pageSize` up to its maximum).
    public func rooms(pageSize: Int? = nil) async throws(ParlorError) -> [Room] {
        let query = pageSize.map { "?page_size=\($0)" } ?? ""
        let response = try await http.send("GET", "/rooms" + query, token: token)
        guard let items = try Self.success(response).arrayValue else { throw .invalidResponse("GET /rooms did not return an array") }
        return try items.map { (item) throws(ParlorError) in try Room(json: item) }
    }

    /// GET /rooms/{id}: open or closed.
    public func room(id: String) async throws(ParlorError) -> Room {
        let response = try await http.send("GET", "/rooms/" + Self.pathSegment(id), token: token)
        return try Room(json: try Self.success(response))
    }

    /// POST /rooms. `name` must be unique (letters, digits, '-', '_'); nil lets the server pick one.
    public func createRoom(displayName: String, name: String? = nil, properties: RoomProperties? = nil) async throws(ParlorError) -> Room {
        var body: [String: JSONValue] = ["display_name": .string(displayName)]
        if let name { body["name"] = .string(name) }
        if let properties { body["properties"] = properties.json }
        let response = try await http.send("POST", "/rooms", token: token, json: .object(JSONObject(sortingKeysOf: body)))
        return try Room(json: try Self.success(response))
    }

    /// GET /rooms/{id}/events: a room's history above `since` without a WebSocket (for tools and backends).
    public func events(roomID: String, since: Int64 = 0, pageSize: Int? = nil) async throws(ParlorError) -> EventsPage {
        var query = "?since=\(since)"
        if let pageSize { query += "&page_size=\(pageSize)" }
        let response = try await http.send("GET", "/rooms/" + Self.pathSegment(roomID) + "/events" + query, token: token)
        return try EventsPage(json: try Self.success(response))
    }

    // MARK: WebSocket

    /// Opens the live session (`GET /ws`) and waits for the server's session:success.
    public func connect(token: String) async throws(ParlorError) -> ParlorSession {
        let connector = SessionConnector(endpoint: endpoint, token: token, configuration: configuration)
        let (opened, hello) = try await connector.open()
        return await ParlorSession.start(connector: connector, opened: opened, hello: hello)
    }

    /// Opens the session with `self.token`.
    public func connect() async throws(ParlorError) -> ParlorSession {
        guard let token else {
            throw ParlorError(code: ParlorError.Code.missingToken, detail: "call auth(name:) first and pass its jwt")
        }
        return try await connect(token: token)
    }

    // MARK: Helpers

    /// The body of a 2xx response, or the server's error.
    static func success(_ response: HTTPClientResponse) throws(ParlorError) -> JSONValue {
        guard (200..<300).contains(response.status) else { throw ParlorError(body: response.json, status: response.status) }
        guard let json = response.json else { throw .invalidResponse("HTTP \(response.status) body is not JSON") }
        return json
    }

    static func pathSegment(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
