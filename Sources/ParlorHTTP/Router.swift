import ParlorCodec
import ParlorProtocol

/// What a route handler gives back.
public enum RouteResult: Sendable {
    /// The response, written now.
    case response(HTTPResponse)
    /// The handler will call `context.respond` or `context.complete` later, from any thread.
    case pending
    /// Switch the connection to WebSocket; the HTTP layer validates the handshake and writes the 101.
    case upgrade(WebSocketUpgrade)
    /// A body produced later, from another thread: its head now, then chunks until the producer or the client ends it.
    case stream(HTTPStreamResponse)
}

public typealias RouteHandler = @Sendable (HTTPRequest, RequestContext) throws -> RouteResult

/// Maps method and path to handlers. Paths are literal segments or `{name}` parameters.
/// A known path with the wrong method answers 405 with Allow; an unknown path answers 404.
public final class Router: Sendable {
    public struct Route: Sendable {
        public let method: String
        public let pattern: String
        let segments: [Segment]
        let handler: RouteHandler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    public let routes: [Route]
    /// The match of every (method, path) that names a route without parameters, worked out once by the full scan
    /// below: most requests (GET /rooms, POST /auth, GET /ws) find theirs with one lookup instead of splitting the
    /// path and trying every route.
    private let literalMatches: [LiteralKey: (Route, [String: String])]

    private struct LiteralKey: Hashable {
        let method: String
        let path: String
    }

    public init(_ build: (inout RouterBuilder) -> Void) {
        var builder = RouterBuilder()
        build(&builder)
        routes = builder.routes
        var literalMatches: [LiteralKey: (Route, [String: String])] = [:]
        for route in routes where !route.segments.contains(where: { if case .parameter = $0 { true } else { false } }) {
            for method in route.method == "GET" ? ["GET", "HEAD"] : [route.method] {
                if case .success(let match) = Self.scan(routes, method: method, path: route.pattern) {
                    literalMatches[LiteralKey(method: method, path: route.pattern)] = match
                }
            }
        }
        self.literalMatches = literalMatches
    }

    /// The route for this request with its path parameters, or the 404/405 to send instead.
    func match(method: String, path: String) -> Result<(Route, [String: String]), HTTPError> {
        if let match = literalMatches[LiteralKey(method: method, path: path)] { return .success(match) }
        return Self.scan(routes, method: method, path: path)
    }

    /// The first route, in the order they were added, whose path matches and whose method is `method`.
    private static func scan(_ routes: [Route], method: String, path: String) -> Result<(Route, [String: String]), HTTPError> {
        let parts = Self.split(path)
        var allowed: [String] = []
        for route in routes {
            guard let parameters = Self.bind(route.segments, to: parts) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .success((route, parameters))
            }
            allowed.append(route.method)
        }
        if allowed.isEmpty {
            return .failure(.notFound(.httpNotFound, "no route for \(path)"))
        }
        return .failure(HTTPError(.httpMethodNotAllowed, title: "Method not allowed",
                                  detail: "\(method) is not allowed on \(path); use \(Self.allowHeader(allowed))",
                                  headers: HTTPHeaders([("Allow", Self.allowHeader(allowed))])))
    }

    /// The pattern of the first route whose path matches, whatever its method (for metrics labels); nil when none.
    func pattern(for path: String) -> String? {
        let parts = Self.split(path)
        return routes.first { Self.bind($0.segments, to: parts) != nil }?.pattern
    }

    /// Methods a path accepts (for OPTIONS and Allow); empty when the path is unknown.
    func allowedMethods(path: String) -> [String] {
        let parts = Self.split(path)
        return routes.filter { Self.bind($0.segments, to: parts) != nil }.map(\.method)
    }

    static func allowHeader(_ methods: [String]) -> String {
        var all = methods
        if all.contains("GET") { all.append("HEAD") }
        all.append("OPTIONS")
        var seen = Set<String>()
        return all.filter { seen.insert($0).inserted }.joined(separator: ", ")
    }

    /// The non-empty segments between slashes, found by UTF-8 byte: `String.split` walks Characters, which was
    /// 2,900 instructions of every GET /rooms (callgrind, bench/HISTORY.md session 21). "/" is ASCII, so every cut is
    /// on a scalar boundary.
    static func split(_ path: String) -> [Substring] {
        let utf8 = path.utf8
        var parts: [Substring] = []
        var start = utf8.startIndex, index = start
        while index != utf8.endIndex {
            if utf8[index] == UInt8(ascii: "/") {
                if start != index { parts.append(path[start..<index]) }
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        if start != utf8.endIndex { parts.append(path[start..<utf8.endIndex]) }
        return parts
    }

    static func bind(_ segments: [Segment], to parts: [Substring]) -> [String: String]? {
        guard segments.count == parts.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            // Bytes, not canonical equivalence: a path segment matches a route's spelling exactly.
            case .literal(let literal): if !literal.utf8.elementsEqual(part.utf8) { return nil }
            case .parameter(let name): parameters[name] = String(part)
            }
        }
        return parameters
    }
}

public struct RouterBuilder {
    var routes: [Router.Route] = []

    public mutating func on(_ method: String, _ pattern: String, _ handler: @escaping RouteHandler) {
        let segments = Router.split(pattern).map { part -> Router.Segment in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
        routes.append(Router.Route(method: method, pattern: pattern, segments: segments, handler: handler))
    }

    public mutating func get(_ pattern: String, _ handler: @escaping RouteHandler) { on("GET", pattern, handler) }
    public mutating func post(_ pattern: String, _ handler: @escaping RouteHandler) { on("POST", pattern, handler) }
    public mutating func delete(_ pattern: String, _ handler: @escaping RouteHandler) { on("DELETE", pattern, handler) }
}
