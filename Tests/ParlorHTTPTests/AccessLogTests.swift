import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorProtocol
import Testing

/// `AccessLogMiddleware`: one line per answer, whatever gave it.
@Suite struct AccessLogTests {
    @Test func aLineHasTheRequestsFields() throws {
        let log = LogLines()
        _ = try appOrderPipeline(log: log).answer(request("GET", "/rooms", headers: [("Host", "h"), ("X-Request-Id", "r-7")]),
                                                  from: ("10.9.8.7", 5555))
        let line = try #require(log.all.first)
        #expect(log.all.count == 1 && line.hasSuffix("\n"))
        for field in ["msg=request", "method=GET", "path=/rooms", "status=200", "bytes=12", "client=10.9.8.7",
                      "peer=10.9.8.7:5555", "request_id=r-7", "duration_ms="] {
            #expect(line.contains(field), "\(field) in \(line)")
        }
    }

    @Test func tokensAreRedactedFromThePath() throws {
        let log = LogLines()
        _ = try appOrderPipeline(log: log).answer(request("GET", "/ws;token=SECRET"))
        let line = try #require(log.all.first)
        #expect(line.contains(#"path="/ws;token=REDACTED""#) && line.contains("status=404"), "\(line)")
        #expect(!line.contains("SECRET"))
    }

    /// A player's stream with its token in the query (the live stream): logged when its head goes out, without the query.
    @Test func aStreamedResponseIsLoggedWithoutItsQueryToken() throws {
        let log = LogLines()
        let router = Router { routes in
            routes.get("/rooms/{id}/live.ogg") { _, _ in
                .stream(HTTPStreamResponse(headers: HTTPHeaders([("Content-Type", "audio/ogg")]), started: { _ in }, ended: { _, _ in }))
            }
        }
        let head = try appOrderPipeline(router: router, log: log).answer(request("GET", "/rooms/R1/live.ogg?token=SECRET"))
        #expect(head.status == 200 && head.values("Transfer-Encoding") == ["chunked"] && head.values("Content-Length").isEmpty)
        let line = try #require(log.all.first)
        #expect(line.contains("path=/rooms/R1/live.ogg") && line.contains("status=200"), "\(line)")
        #expect(!line.contains("SECRET"))
    }

    @Test func refusalsAndErrorsAreLoggedWithTheirStatus() throws {
        let log = LogLines()
        let pipeline = appOrderPipeline(log: log)
        _ = try pipeline.answer(request("GET", "/nowhere"))
        _ = try pipeline.answer(request("POST", "/rooms", headers: [("Host", "evil.example")]))
        _ = try pipeline.answer(request("GET", "/broken"))
        #expect(log.all.map { $0.contains("status=404") } == [true, false, false])
        #expect(log.all[1].contains("status=421") && log.all[2].contains("status=500"))
    }

    @Test func theLoggedBytesAreTheBodyAsWrittenWithItsRequestID() throws {
        let log = LogLines()
        let response = try appOrderPipeline(log: log).answer(request("GET", "/nowhere"))
        #expect(log.all.first?.contains("bytes=\(response.body.count) ") == true)
    }

    @Test func anUpgradeIsLoggedAs101() throws {
        let log = LogLines()
        _ = try appOrderPipeline(log: log).answer(request("GET", "/ws", headers: upgradeHeaders()))
        #expect(log.all.count == 1 && log.all[0].contains("status=101") && log.all[0].contains("bytes=0"))
    }

    @Test func theForwardedClientIsLoggedBesideThePeer() throws {
        let log = LogLines()
        let proxies = try #require(TrustedProxies(list: "10.0.0.1"))
        _ = try appOrderPipeline(log: log).answer(request("GET", "/rooms", headers: [("Host", "h"), ("Forwarded", "for=198.51.100.4")]),
                                                  from: ("10.0.0.1", 7000), trustedProxies: proxies)
        #expect(log.all.first?.contains("client=198.51.100.4") == true && log.all.first?.contains("peer=10.0.0.1:7000") == true)
    }

    @Test func nothingIsWrittenBelowInfo() throws {
        let log = LogLines()
        _ = try appOrderPipeline(log: log, logger: Logger(level: .warning)).answer(request("GET", "/rooms"))
        #expect(log.all.isEmpty)
    }

    @Test func aJSONLineIsOneObject() throws {
        let log = LogLines()
        _ = try appOrderPipeline(log: log, logger: Logger(level: .info, format: .json))
            .answer(request("DELETE", "/rooms/r1", headers: [("Host", "localhost")]))
        let line = try #require(log.all.first)
        let object = try #require(try JSONParser.parse(Array(line.utf8)).objectValue)
        #expect(object["method"]?.stringValue == "DELETE" && object["status"] == .number(204))
        #expect(object["path"]?.stringValue == "/rooms/r1")
    }
}
