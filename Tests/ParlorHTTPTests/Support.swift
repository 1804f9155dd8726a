import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorProtocol
import Testing

/// Requests made from their bytes by the real parser, so a test's request is one a connection could have read.
func request(_ method: String, _ target: String, headers: [(String, String)] = [("Host", "127.0.0.1:8080")], body: String = "",
             version: String = "1.1") throws -> HTTPRequest {
    var text = "\(method) \(target) HTTP/\(version)\r\n"
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    if !body.isEmpty { text += "Content-Length: \(body.utf8.count)\r\n" }
    text += "\r\n" + body
    var parser = HTTPRequestParser()
    parser.append(Array(text.utf8))
    return try #require(try parser.next())
}

/// A few routes of each kind: literal, with a parameter, late, failing, upgrading.
func testRouter() -> Router {
    Router { routes in
        routes.get("/rooms") { _, _ in .response(.json(["rooms": []])) }
        routes.post("/rooms") { request, _ in .response(HTTPResponse(status: 201, body: request.body)) }
        routes.get("/rooms/{id}") { _, context in .response(.json(["id": .string(context.parameter("id"))])) }
        routes.delete("/rooms/{id}") { _, _ in .response(HTTPResponse(status: 204)) }
        routes.get("/whoami") { _, context in
            .response(.json(["client": .string(context.clientAddress), "peer": .string(context.peerIP),
                             "request_id": .string(context.requestID)]))
        }
        routes.get("/ws") { _, _ in .upgrade(WebSocketUpgrade { _, _ in NoMessages() }) }
        routes.get("/teapot") { _, _ in throw HTTPError(.httpNotFound, title: "Not found", detail: "no teapot") }
        routes.get("/broken") { _, _ in throw TestFailure() }
    }
}

struct TestFailure: Error {}

/// The order the app composes (`Routes.middleware`), with the log lines kept for the test.
func appOrderPipeline(router: Router = testRouter(), hosts: HostAllowlist = HostAllowlist(names: [], machineHostName: nil),
                      origins: [String] = [], publicURL: PublicURL? = nil, log: LogLines? = nil,
                      logger: Logger = Logger(level: .info)) -> HTTPPipeline {
    HTTPPipeline(middleware: [RequestIDMiddleware(),
                              AccessLogMiddleware(logger: logger, write: { line in (log ?? LogLines()).append(line) }),
                              ExpectationMiddleware(),
                              HostAllowlistMiddleware(hosts),
                              CORSMiddleware(allowedOrigins: origins),
                              WebSocketOriginMiddleware(allowedOrigins: origins, publicURL: publicURL)],
                 router: router)
}

/// Access log lines as they were written.
final class LogLines: Sendable {
    private let lines = Locked<[String]>([])
    func append(_ bytes: [UInt8]) { lines.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } }
    var all: [String] { lines.withLock { $0 } }
}

extension HTTPPipeline {
    /// `respond(to:)`, failing the test when no answer came.
    func answer(_ request: HTTPRequest, from peer: (ip: String, port: Int) = ("127.0.0.1", 50000),
                trustedProxies: TrustedProxies = .none) throws -> HTTPResponse {
        try #require(respond(to: request, from: peer, trustedProxies: trustedProxies))
    }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
    func json() throws -> JSONObject { try #require(try JSONParser.parse(body).objectValue) }
    /// Every value of header `name`, for checking a header is there once.
    func values(_ name: String) -> [String] { headers.values(name) }
}

/// Records which halves ran, in order, under its name.
struct Recording: HTTPMiddleware {
    let name: String
    let trail: Trail
    var refuses = false

    func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        trail.add("\(name).request")
        return refuses ? HTTPResponse(status: 418) : nil
    }

    func response(_ response: inout HTTPResponse, _ exchange: HTTPExchange) { trail.add("\(name).response") }

    func responded(status: Int, bytes: Int, _ exchange: HTTPExchange) {
        trail.add("\(name).responded \(status) \(exchange.route)")
    }
}

final class Trail: Sendable {
    private let steps = Locked<[String]>([])
    func add(_ step: String) { steps.withLock { $0.append(step) } }
    var all: [String] { steps.withLock { $0 } }
}

/// A WebSocket delegate for routes that upgrade; `HTTPPipeline.respond` never opens the socket, so it never runs.
final class NoMessages: WebSocketDelegate {
    func webSocketDidOpen(_ socket: WebSocketConnection) {}
    func webSocket(_ socket: WebSocketConnection, didReceiveText text: String) {}
    func webSocket(_ socket: WebSocketConnection, didReceiveBinary bytes: [UInt8]) {}
    func webSocketDidClose(_ socket: WebSocketConnection, code: UInt16?, reason: String) {}
}

/// The headers of a valid upgrade (RFC 6455 §4.1's sample key) from `origin`, at `host`.
func upgradeHeaders(host: String = "127.0.0.1:8080", origin: String? = nil) -> [(String, String)] {
    var headers = [("Host", host), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
                   ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13")]
    if let origin { headers.append(("Origin", origin)) }
    return headers
}
