import Foundation
import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import Testing

/// The router through `HTTPPipeline.respond`: what a connection would write for each kind of route.
@Suite struct RouterPipelineTests {
    let pipeline = HTTPPipeline(middleware: [], router: testRouter())

    @Test func aLiteralRouteAnswers() throws {
        let response = try pipeline.answer(request("GET", "/rooms"))
        #expect(response.status == 200)
        #expect(try response.json()["rooms"] == .array([]))
    }

    @Test func headIsAnsweredByTheGetRoute() throws {
        #expect(try pipeline.answer(request("HEAD", "/rooms")).status == 200)
        #expect(try pipeline.answer(request("HEAD", "/rooms/r1")).status == 200)
    }

    @Test func pathParametersReachTheRoute() throws {
        #expect(try pipeline.answer(request("GET", "/rooms/r-42")).json()["id"] == .string("r-42"))
    }

    @Test func theQueryIsNotPartOfTheMatch() throws {
        #expect(try pipeline.answer(request("GET", "/rooms/r1?page_size=3")).json()["id"] == .string("r1"))
    }

    @Test func theBodyReachesTheRoute() throws {
        let response = try pipeline.answer(request("POST", "/rooms", body: #"{"name":"x"}"#))
        #expect(response.status == 201 && response.text == #"{"name":"x"}"#)
    }

    @Test func anUnknownPathIs404WithAJSONError() throws {
        let response = try pipeline.answer(request("GET", "/nowhere"))
        #expect(response.status == 404)
        #expect(try response.json()["code"] == .string(ErrorCode.httpNotFound.rawValue))
    }

    @Test func aKnownPathWithTheWrongMethodIs405WithAllow() throws {
        let response = try pipeline.answer(request("PUT", "/rooms/r1"))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, DELETE, HEAD, OPTIONS")
    }

    @Test func aThrownHTTPErrorIsAnsweredWithItsStatus() throws {
        let response = try pipeline.answer(request("GET", "/teapot"))
        #expect(response.status == 404)
        #expect(try response.json()["detail"] == .string("no teapot"))
    }

    @Test func anyOtherThrownErrorIs500() throws {
        let response = try pipeline.answer(request("GET", "/broken"))
        #expect(response.status == 500)
        #expect(!response.text.contains("TestFailure"), "the error itself stays in the server")
    }

    @Test func aLateAnswerFromAnotherThreadIsWaitedFor() throws {
        let router = Router { routes in
            routes.get("/late") { _, context in
                Thread.detachNewThread { context.respond(HTTPResponse(status: 202)) }
                return .pending
            }
        }
        #expect(try HTTPPipeline(middleware: [], router: router).answer(request("GET", "/late")).status == 202)
    }

    @Test func aLateCompletionMayThrow() throws {
        let router = Router { routes in
            routes.get("/late") { _, context in
                Thread.detachNewThread { context.complete { throw HTTPError.invalidField("x", "is wrong") } }
                return .pending
            }
        }
        #expect(try HTTPPipeline(middleware: [], router: router).answer(request("GET", "/late")).status == 400)
    }

    @Test func aCompletionOnTheLoopRunsItsBody() throws {
        let router = Router { routes in
            routes.get("/late") { _, context in
                context.complete(onLoop: { .response(HTTPResponse(status: 203)) })
                return .pending
            }
        }
        #expect(try HTTPPipeline(middleware: [], router: router).answer(request("GET", "/late")).status == 203)
    }

    @Test func theFirstLateAnswerWins() throws {
        let router = Router { routes in
            routes.get("/late") { _, context in
                context.respond(HTTPResponse(status: 201))
                context.respond(HTTPResponse(status: 500))
                return .pending
            }
        }
        #expect(try HTTPPipeline(middleware: [], router: router).answer(request("GET", "/late")).status == 201)
    }

    @Test func aRouteThatNeverAnswersGivesNoResponse() throws {
        let router = Router { routes in routes.get("/never") { _, _ in .pending } }
        #expect(HTTPPipeline(middleware: [], router: router).respond(to: try request("GET", "/never"), timeout: .milliseconds(20)) == nil)
    }

    @Test func anUpgradeIsAnswered101WithTheAcceptKey() throws {
        let response = try pipeline.answer(request("GET", "/ws", headers: upgradeHeaders()))
        #expect(response.status == 101)
        // RFC 6455 §1.3's sample.
        #expect(response.headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func anUpgradeWithoutTheHandshakeIs426() throws {
        let response = try pipeline.answer(request("GET", "/ws"))
        #expect(response.status == 426 && response.headers["Sec-WebSocket-Version"] == "13")
    }

    @Test func anUpgradeWithABadKeyIs400() throws {
        var headers = upgradeHeaders()
        headers[3] = ("Sec-WebSocket-Key", "short")
        #expect(try pipeline.answer(request("GET", "/ws", headers: headers)).status == 400)
    }

    @Test func theRouteSeesTheClientAndPeerAddresses() throws {
        let body = try pipeline.answer(request("GET", "/whoami"), from: ("10.1.2.3", 4000)).json()
        #expect(body["client"] == .string("10.1.2.3") && body["peer"] == .string("10.1.2.3"))
    }

    @Test func behindATrustedProxyTheClientIsTheForwardedOne() throws {
        let proxies = try #require(TrustedProxies(list: "10.0.0.0/8"))
        let forwarded = try request("GET", "/whoami", headers: [("Host", "a"), ("X-Forwarded-For", "203.0.113.7")])
        let body = try pipeline.answer(forwarded, from: ("10.1.2.3", 4000), trustedProxies: proxies).json()
        #expect(body["client"] == .string("203.0.113.7") && body["peer"] == .string("10.1.2.3"))
        let untrusted = try pipeline.answer(forwarded, from: ("192.0.2.9", 4000), trustedProxies: proxies).json()
        #expect(untrusted["client"] == .string("192.0.2.9"))
    }
}
