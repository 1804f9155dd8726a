import ParlorCodec
@testable import ParlorHTTP
import Testing

/// The byte-level pieces of the request path (session 21): route matching by UTF-8 segments and generated request
/// ids, each against the plain definition it replaced.
@Suite struct RequestPathTests {
    static let router = Router { routes in
        for (method, pattern) in [("GET", "/rooms"), ("POST", "/rooms"), ("GET", "/rooms/{id}"), ("GET", "/rooms/{id}/members"),
                                  ("GET", "/ws"), ("GET", "/é/{x}")] {
            routes.on(method, pattern) { _, _ in .pending }
        }
    }

    @Test(arguments: ["/", "", "/rooms", "rooms", "//rooms//", "/rooms/abc", "/rooms/abc/members/", "/a/b/c/d",
                      "/é/ü", "/rooms/%2F", "///", "/ws?x", "/x/"])
    func splitMatchesStringSplit(path: String) {
        #expect(Router.split(path) == path.split(separator: "/", omittingEmptySubsequences: true))
    }

    @Test func routesMatchByExactSegments() throws {
        func matched(_ method: String, _ path: String) -> (String, [String: String])? {
            guard case .success(let (route, parameters)) = Self.router.match(method: method, path: path) else { return nil }
            return (route.pattern, parameters)
        }
        #expect(matched("GET", "/rooms")?.0 == "/rooms")
        #expect(matched("POST", "//rooms/")?.0 == "/rooms")
        #expect(matched("GET", "/rooms/r1")?.1 == ["id": "r1"])
        #expect(matched("GET", "/rooms/r1/members")?.1 == ["id": "r1"])
        #expect(matched("HEAD", "/ws")?.0 == "/ws")
        #expect(matched("GET", "/é/ü")?.1 == ["x": "ü"])
        #expect(matched("GET", "/e\u{301}/x") == nil, "a decomposed spelling is not the route's literal")
        #expect(matched("GET", "/Rooms") == nil)
        #expect(matched("GET", "/rooms/r1/events") == nil)
        guard case .failure(let notAllowed) = Self.router.match(method: "DELETE", path: "/rooms") else {
            Issue.record("DELETE /rooms matched")
            return
        }
        #expect(notAllowed.status == 405)
    }

    /// Paths without parameters are looked up in a table made by the same scan: the first route added still wins,
    /// even where a route with a parameter shadows a literal one.
    @Test func literalPathsMatchAsTheScanMatchesThem() throws {
        let router = Router { routes in
            for (method, pattern) in [("GET", "/a/{x}"), ("GET", "/a/b"), ("POST", "/a/b"), ("GET", "/c")] {
                routes.on(method, pattern) { _, _ in .pending }
            }
        }
        func matched(_ method: String, _ path: String) -> (String, String, [String: String])? {
            guard case .success(let (route, parameters)) = router.match(method: method, path: path) else { return nil }
            return (route.method, route.pattern, parameters)
        }
        #expect(matched("GET", "/a/b").map { [$0.0, $0.1] } == ["GET", "/a/{x}"])
        #expect(matched("GET", "/a/b")?.2 == ["x": "b"])
        #expect(matched("POST", "/a/b").map { [$0.0, $0.1] } == ["POST", "/a/b"])
        #expect(matched("HEAD", "/c")?.1 == "/c")
        #expect(matched("POST", "/c") == nil)
        guard case .failure(let notAllowed) = router.match(method: "DELETE", path: "/a/b") else {
            Issue.record("DELETE /a/b matched")
            return
        }
        #expect(notAllowed.status == 405 && notAllowed.headers["Allow"] == "GET, POST, HEAD, OPTIONS")
    }

    @Test(arguments: [0, 1, 9, 10, 15, 16, 255, 4096, 0xDEAD_BEEF, UInt64.max])
    func generatedIDsAreThePrefixAndTheNumberInHex(number: UInt64) {
        let id = RequestID.generated(number)
        let parts = id.split(separator: "-")
        #expect(parts.count == 2)
        #expect(parts.first?.count == 16 && parts.first?.allSatisfy(\.isHexDigit) == true)
        #expect(parts.first.map(String.init) == RequestID.generated(7).split(separator: "-").first.map(String.init))
        #expect(parts.last.map(String.init) == String(number, radix: 16))
        #expect(RequestID.isSafe(id))
    }
}
