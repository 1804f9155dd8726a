import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import Testing

/// `ExpectationMiddleware` and `HostAllowlistMiddleware`: requests refused for their head alone.
@Suite struct RefusalMiddlewareTests {
    let pipeline = appOrderPipeline(hosts: HostAllowlist(names: ["rooms.example.com"], machineHostName: "box"))

    @Test func continueIsTheExpectationThatIsMet() throws {
        let response = try pipeline.answer(request("POST", "/rooms", headers: [("Host", "localhost"), ("Expect", "100-continue")], body: "{}"))
        #expect(response.status == 201)
    }

    @Test(arguments: ["something-else", "100-continue, extra", "200-ok"])
    func anyOtherExpectationIs417(expect: String) throws {
        let response = try pipeline.answer(request("POST", "/rooms", headers: [("Host", "localhost"), ("Expect", expect)], body: "{}"))
        #expect(response.status == 417)
        #expect(try response.json()["code"] == .string(ErrorCode.httpExpectationFailed.rawValue))
    }

    @Test func anUnmetExpectationIsRefusedBeforeTheHostIsChecked() throws {
        let response = try pipeline.answer(request("POST", "/rooms", headers: [("Host", "evil.example"), ("Expect", "x")]))
        #expect(response.status == 417)
    }

    @Test(arguments: ["POST", "DELETE"])
    func anActingRequestToAForeignHostIs421(method: String) throws {
        let response = try pipeline.answer(request(method, method == "POST" ? "/rooms" : "/rooms/r1", headers: [("Host", "evil.example")]))
        #expect(response.status == 421)
        #expect(try response.json()["detail"]?.stringValue?.hasPrefix("\"evil.example\" is not a name of this server") == true)
    }

    @Test func aReadFromAForeignHostPasses() throws {
        #expect(try pipeline.answer(request("GET", "/rooms", headers: [("Host", "evil.example")])).status == 200)
    }

    @Test func anUpgradeToAForeignHostIs421() throws {
        #expect(try pipeline.answer(request("GET", "/ws", headers: upgradeHeaders(host: "evil.example"))).status == 421)
    }

    @Test(arguments: ["localhost", "LOCALHOST:8080", "rooms.example.com", "rooms.example.com.", "box", "box.local:1",
                      "192.168.1.20:8080", "[::1]:8080", "127.0.0.1"])
    func namesOfThisServerAndIPLiteralsPass(host: String) throws {
        #expect(try pipeline.answer(request("POST", "/rooms", headers: [("Host", host)])).status == 201)
    }

    @Test func aRequestWithoutAHostPasses() throws {
        #expect(try pipeline.answer(request("POST", "/rooms", headers: [], version: "1.0")).status == 201)
    }

    @Test func behindATrustedProxyTheForwardedHostIsChecked() throws {
        let proxies = try #require(TrustedProxies(list: "10.0.0.1"))
        let refused = try request("POST", "/rooms", headers: [("Host", "localhost"), ("X-Forwarded-Host", "evil.example")])
        #expect(try pipeline.answer(refused, from: ("10.0.0.1", 1), trustedProxies: proxies).status == 421)
        #expect(try pipeline.answer(refused, from: ("10.0.0.2", 1), trustedProxies: proxies).status == 201, "an untrusted peer's header is ignored")
    }

    @Test func anyHostPassesWhenTheCheckIsOff() throws {
        var hosts = HostAllowlist(names: [], machineHostName: nil)
        hosts.allowsAnyHost = true
        #expect(try appOrderPipeline(hosts: hosts).answer(request("POST", "/rooms", headers: [("Host", "evil.example")])).status == 201)
    }
}
