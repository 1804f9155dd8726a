import ParlorCodec
import ParlorHTTP
import Testing

/// How `HTTPPipeline` runs the halves of its middleware.
@Suite struct ChainOrderTests {
    @Test func requestHalvesRunInOrderAndTheOthersInReverse() throws {
        let trail = Trail()
        let pipeline = HTTPPipeline(middleware: [Recording(name: "a", trail: trail), Recording(name: "b", trail: trail)],
                                    router: testRouter())
        _ = try pipeline.answer(request("GET", "/rooms"))
        #expect(trail.all == ["a.request", "b.request", "b.response", "a.response", "b.responded 200 /rooms", "a.responded 200 /rooms"])
    }

    @Test func aRefusalSkipsTheRestOfTheChainButEveryAnswerPassesEveryResponseHalf() throws {
        let trail = Trail()
        let pipeline = HTTPPipeline(middleware: [Recording(name: "a", trail: trail), Recording(name: "b", trail: trail, refuses: true),
                                                 Recording(name: "c", trail: trail)],
                                    router: Router { routes in routes.get("/x") { _, _ in trail.add("route"); return .pending } })
        #expect(try pipeline.answer(request("GET", "/x")).status == 418)
        #expect(trail.all == ["a.request", "b.request", "c.response", "b.response", "a.response",
                              "c.responded 418 unmatched", "b.responded 418 unmatched", "a.responded 418 unmatched"])
    }

    @Test func aLateAnswerPassesTheResponseHalvesToo() throws {
        let trail = Trail()
        let router = Router { routes in
            routes.get("/late") { _, context in
                context.complete(onLoop: { .response(HTTPResponse(status: 202)) })
                return .pending
            }
        }
        let response = try HTTPPipeline(middleware: [RequestIDMiddleware(), Recording(name: "a", trail: trail)], router: router)
            .answer(request("GET", "/late"))
        #expect(response.status == 202 && response.headers["X-Request-Id"] != nil)
        #expect(trail.all == ["a.request", "a.response", "a.responded 202 /late"])
    }

    /// The route label of parlor_requests_total: the pattern for answers about a known route, "unmatched" for a 404.
    @Test func answersAboutAKnownRouteAreLabelledWithItsPattern() throws {
        let trail = Trail()
        let pipeline = HTTPPipeline(middleware: [Recording(name: "m", trail: trail), CORSMiddleware(allowedOrigins: []),
                                                 WebSocketOriginMiddleware(allowedOrigins: [], publicURL: nil)],
                                    router: testRouter())
        _ = try pipeline.answer(request("GET", "/rooms/r1"))
        _ = try pipeline.answer(request("PUT", "/rooms/r1"))
        _ = try pipeline.answer(request("OPTIONS", "/rooms/r1"))
        _ = try pipeline.answer(request("GET", "/ws", headers: upgradeHeaders(origin: "https://evil.example")))
        _ = try pipeline.answer(request("GET", "/nowhere"))
        #expect(trail.all.filter { $0.hasPrefix("m.responded") }
            == ["m.responded 200 /rooms/{id}", "m.responded 405 /rooms/{id}", "m.responded 204 /rooms/{id}",
                "m.responded 403 /ws", "m.responded 404 unmatched"])
    }

    @Test func theAppOrderRefusesInItsOrder() throws {
        // An unmet Expect, a foreign host and a foreign Origin at once: the first check in the chain answers.
        let headers = upgradeHeaders(host: "evil.example", origin: "https://evil.example") + [("Expect", "x")]
        #expect(try appOrderPipeline().answer(request("GET", "/ws", headers: headers)).status == 417)
        #expect(try appOrderPipeline().answer(request("GET", "/ws", headers: Array(headers.dropLast()))).status == 421)
        #expect(try appOrderPipeline().answer(request("GET", "/ws", headers: upgradeHeaders(origin: "https://evil.example"))).status == 403)
    }

    /// What a middleware that guards one route (the app's `--auth-rate`) sees before the router runs.
    @Test func aMiddlewareKnowsWhichRouteTheRequestWillReach() throws {
        struct Peek: HTTPMiddleware {
            let trail: Trail
            func request(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
                trail.add("\(exchange.method) \(exchange.path) → \(exchange.routePattern() ?? "none")")
                return nil
            }
        }
        let trail = Trail()
        let pipeline = HTTPPipeline(middleware: [Peek(trail: trail)], router: testRouter())
        for (method, target) in [("POST", "//rooms/"), ("GET", "/rooms/r1?x=1"), ("PUT", "/rooms/r1"), ("GET", "/nowhere")] {
            _ = try pipeline.answer(request(method, target))
        }
        #expect(trail.all == ["POST //rooms/ → /rooms", "GET /rooms/r1 → /rooms/{id}", "PUT /rooms/r1 → none", "GET /nowhere → none"])
    }
}
