import Foundation
import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorProtocol
import ParlorRooms
import ParlorStore

/// The HTTP API: each route validates its input and answers JSON; errors carry `{"code","title","detail"}`.
struct Routes: Sendable {
    let configuration: AppConfiguration
    let storage: AppStorage
    /// Where the routes' database work runs: never on the loop thread (`Routes+OffLoop.swift`).
    let executor: DatabaseExecutor
    let rooms: RoomsService
    /// The rooms' deliveries to WebSocket connections, which registers each connection as it is accepted.
    let delivery: WebSocketDelivery
    let users: UserDirectory
    let tokens: TokenService
    let logger: Logger
    let authLimiter: AddressRateLimiter?
    /// POST /rooms per client address (see --room-create-rate); nil when off.
    var roomCreationLimiter: AddressRateLimiter? = nil
    /// The rooms' live streams; nil without a forwarding unit (--media mesh).
    var liveStreams: LiveStreams? = nil
    /// Several nodes (PostgreSQL): signs the downloads this node proxies and checks those proxied to it.
    var nodeProxyAuth: NodeProxyAuth? = nil
    let roomListCache = RoomListCache()
    let verifiedTokens = VerifiedTokens()
    let authWrites = AuthWriteQueue()

    var authenticator: Authenticator {
        Authenticator(tokens: tokens, users: users, access: configuration.access, verified: verifiedTokens,
                      isStorageFailure: { [rooms] in rooms.store.isStorageFailure($0) })
    }

    func router() -> Router {
        Router { routes in
            routes.post("/auth", auth)
            routes.get("/rooms", listRooms)
            routes.post("/rooms", createRoom)
            routes.get("/rooms/{id}", getRoom)
            routes.get("/rooms/{id}/members", listMembers)
            routes.get("/rooms/{id}/events", listEvents)
            routes.get("/healthz", health)
            routes.get("/ws", webSocket)
            routes.get("/openapi.json", openAPI)
            registerAdminRoutes(&routes)
            registerModerationRoutes(&routes)
            registerRecordingRoutes(&routes)
            registerLiveStreamRoutes(&routes)
            for path in WebClientFiles.files.keys.sorted() { routes.get(path, staticFile) }
        }
    }

    /// 200 while the database answers and writes get through; 503 with the reason otherwise (a full disk, an
    /// unreachable PostgreSQL). On a read thread: SQLite's reader answers `SELECT 1` and while writes fail a probe
    /// write runs at most once a second; PostgreSQL's pool answers `SELECT 1`.
    func health(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        let storage = self.storage
        return onReader(context) {
            if let problem = storage.healthProblem() {
                return .response(.json(["status": "unavailable", "detail": .string(problem)], status: 503))
            }
            return .response(.json(["status": "ok"]))
        }
    }

    /// Runs a read of the rooms store on a reader connection, turning store failures into a 500. It blocks: call it
    /// off the loop (`onReader`).
    func read<T>(_ body: (any RoomReader) throws -> T) throws(HTTPError) -> T {
        do {
            return try rooms.store.read(body)
        } catch {
            logger.error("database read failed", ["error": "\(error)"])
            throw storageError(error)
        }
    }

    /// 503 (try later) when the storage failed (a lost PostgreSQL connection, a full disk), else 500.
    func storageError(_ error: any Error) -> HTTPError {
        guard rooms.store.isStorageFailure(error) else { return HTTPError.internalError() }
        return Self.databaseUnavailable
    }

    /// 503 for a request the database could not serve right now (unreachable, a full disk).
    static let databaseUnavailable = HTTPError(.serverUnavailable, title: "Service unavailable",
                                               detail: "the database is unavailable; try again later")

    /// `page_size` from the query: default and maximum from configuration.
    func pageSize(_ request: HTTPRequest) throws(HTTPError) -> Int {
        guard let text = request.head.query["page_size"] else { return configuration.rooms.defaultPageSize }
        guard let value = Int(text), (1...configuration.rooms.maxPageSize).contains(value) else {
            throw HTTPError.invalidField("page_size", "must be a whole number from 1 to \(configuration.rooms.maxPageSize)")
        }
        return value
    }

    func cursor(_ request: HTTPRequest) throws(HTTPError) -> PageCursor? {
        guard let text = request.head.query["cursor"] else { return nil }
        guard let cursor = PageCursor(encoded: text) else { throw HTTPError.invalidField("cursor", "is not a cursor this server issued") }
        return cursor
    }

    /// `Link: <url>; rel="next"` for a page that has a successor, keeping the body a plain array.
    func linkHeader(_ request: HTTPRequest, next: String?, parameter: String = "cursor") -> HTTPHeaders {
        guard let next else { return HTTPHeaders() }
        var query = request.head.query
        query[parameter] = next
        let encoded = query.sorted { $0.key < $1.key }.map { "\(percentEncode($0.key))=\(percentEncode($0.value))" }.joined(separator: "&")
        return HTTPHeaders([("Link", "<\(request.head.path)?\(encoded)>; rel=\"next\"")])
    }

    func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}

/// Field rules shared by HTTP bodies and WebSocket requests.
enum FieldRules {
    /// Trimmed, NFC-normalised text of `min...max` characters and at most `4 × max` bytes, with no control,
    /// bidirectional-control, invisible or tag characters (`TextRules`), or the rule it broke.
    static func text(_ value: String, min: Int, max: Int) -> Result<String, FieldError> {
        TextRules.check(value, minCharacters: min, maxCharacters: max, maxBytes: max * 4).mapError { .invalid("", $0.rule) }
    }

    /// The HTTP body's required text field `name`, checked by `text`: 400 when it is missing, not a string or breaks a rule.
    static func requiredText(_ name: String, in body: JSONObject, min: Int, max: Int) throws(HTTPError) -> String {
        guard let raw = body[name] else { throw HTTPError.missingField(name) }
        guard case .string(let value) = raw else { throw HTTPError.invalidField(name, "must be a string") }
        switch text(value, min: min, max: max) {
        case .success(let valid): return valid
        case .failure(let violation): throw HTTPError.invalidField(name, violation.rule)
        }
    }
}
