import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import Testing

/// `CORSMiddleware` and `WebSocketOriginMiddleware`.
@Suite struct CORSAndOriginTests {
    @Test func aPreflightIs204WithThePathsMethods() throws {
        let response = try appOrderPipeline().answer(request("OPTIONS", "/rooms/r1"))
        #expect(response.status == 204)
        #expect(response.headers["Allow"] == "GET, DELETE, HEAD, OPTIONS")
        #expect(response.headers["Access-Control-Allow-Methods"] == "GET, DELETE, HEAD, OPTIONS")
        #expect(response.headers["Access-Control-Allow-Headers"] == "Authorization, Content-Type")
        #expect(response.headers["Access-Control-Max-Age"] == "600")
    }

    @Test func aPreflightGrantsTheHeadersAsked() throws {
        let response = try appOrderPipeline().answer(request("OPTIONS", "/rooms", headers: [("Host", "h"), ("Access-Control-Request-Headers", "X-Custom")]))
        #expect(response.headers["Access-Control-Allow-Headers"] == "X-Custom")
    }

    @Test func aPreflightForAnUnknownPathIs404() throws {
        #expect(try appOrderPipeline().answer(request("OPTIONS", "/nowhere")).status == 404)
    }

    @Test func aPreflightForTheServerIsOptions() throws {
        let response = try appOrderPipeline().answer(request("OPTIONS", "*"))
        #expect(response.status == 204 && response.headers["Allow"] == "OPTIONS")
    }

    @Test func anAllowedOriginMayReadAnswersAndTheirErrors() throws {
        let pipeline = appOrderPipeline(origins: ["https://app.example"])
        for target in ["/rooms", "/nowhere"] {
            let response = try pipeline.answer(request("GET", target, headers: [("Host", "h"), ("Origin", "https://app.example")]))
            #expect(response.headers["Access-Control-Allow-Origin"] == "https://app.example")
            #expect(response.headers["Access-Control-Expose-Headers"] == "Link, Retry-After, X-Request-Id")
            #expect(response.headers["Vary"] == "Origin")
        }
    }

    @Test func anyOriginIsStarWithoutVary() throws {
        let response = try appOrderPipeline(origins: ["*"]).answer(request("GET", "/rooms", headers: [("Host", "h"), ("Origin", "https://x.example")]))
        #expect(response.headers["Access-Control-Allow-Origin"] == "*" && response.headers["Vary"] == nil)
    }

    @Test func anotherOriginGetsNoCORSHeaders() throws {
        let pipeline = appOrderPipeline(origins: ["https://app.example"])
        let response = try pipeline.answer(request("GET", "/rooms", headers: [("Host", "h"), ("Origin", "https://other.example")]))
        #expect(response.status == 200 && response.headers["Access-Control-Allow-Origin"] == nil)
        #expect(try pipeline.answer(request("GET", "/rooms")).headers["Access-Control-Allow-Origin"] == nil, "no Origin, no CORS")
    }

    @Test func aRefusalStillCarriesCORSHeaders() throws {
        let pipeline = appOrderPipeline(origins: ["https://app.example"])
        let response = try pipeline.answer(request("POST", "/rooms", headers: [("Host", "evil.example"), ("Origin", "https://app.example")]))
        #expect(response.status == 421 && response.headers["Access-Control-Allow-Origin"] == "https://app.example")
    }

    @Test(arguments: ["http://127.0.0.1:8080", "HTTP://127.0.0.1:8080"])
    func anUpgradeFromTheServersOwnPageProceeds(origin: String) throws {
        #expect(try appOrderPipeline().answer(request("GET", "/ws", headers: upgradeHeaders(origin: origin))).status == 101)
    }

    @Test func anUpgradeWithoutAnOriginProceeds() throws {
        #expect(try appOrderPipeline().answer(request("GET", "/ws", headers: upgradeHeaders())).status == 101)
    }

    @Test func anUpgradeFromAnotherSiteIs403() throws {
        let response = try appOrderPipeline().answer(request("GET", "/ws", headers: upgradeHeaders(origin: "https://evil.example")))
        #expect(response.status == 403)
        #expect(try response.json()["code"] == .string(ErrorCode.httpOriginNotAllowed.rawValue))
    }

    @Test func theRouteDoesNotRunForARefusedOrigin() throws {
        let trail = Trail()
        let router = Router { routes in routes.get("/ws") { _, _ in trail.add("route"); return .pending } }
        let response = try appOrderPipeline(router: router).answer(request("GET", "/ws", headers: upgradeHeaders(origin: "https://evil.example")))
        #expect(response.status == 403 && trail.all.isEmpty)
    }

    @Test func configuredAndPublicURLOriginsMayUpgrade() throws {
        let pipeline = appOrderPipeline(origins: ["https://app.example"], publicURL: PublicURL("https://rooms.example.com/"))
        for origin in ["https://app.example", "https://rooms.example.com", "https://rooms.example.com:443"] {
            #expect(try pipeline.answer(request("GET", "/ws", headers: upgradeHeaders(origin: origin))).status == 101, "\(origin)")
        }
        #expect(try pipeline.answer(request("GET", "/ws", headers: upgradeHeaders(origin: "http://rooms.example.com"))).status == 403)
    }

    @Test func behindAProxyTheForwardedSchemeAndHostAreTheServersOrigin() throws {
        let proxies = try #require(TrustedProxies(list: "10.0.0.1"))
        let pipeline = appOrderPipeline(hosts: HostAllowlist(names: ["rooms.example.com"], machineHostName: nil))
        var headers = upgradeHeaders(host: "127.0.0.1:8080", origin: "https://rooms.example.com")
        headers += [("X-Forwarded-Host", "rooms.example.com"), ("X-Forwarded-Proto", "https")]
        #expect(try pipeline.answer(request("GET", "/ws", headers: headers), from: ("10.0.0.1", 1), trustedProxies: proxies).status == 101)
        headers[headers.count - 1] = ("X-Forwarded-Proto", "http")
        #expect(try pipeline.answer(request("GET", "/ws", headers: headers), from: ("10.0.0.1", 1), trustedProxies: proxies).status == 403)
    }

    @Test func anOriginOnAPlainRequestIsNotChecked() throws {
        #expect(try appOrderPipeline().answer(request("GET", "/rooms", headers: [("Host", "h"), ("Origin", "https://evil.example")])).status == 200)
    }
}
