import ParlorCodec
@testable import ParlorHTTP
import ParlorLoop
import ParlorProtocol
import Testing

/// Parsing of Forwarded / X-Forwarded-* and --trusted-proxies (issue 15): pure functions, no server.
@Suite struct ForwardedHeaderTests {
    static func resolve(_ headers: [(String, String)], peer: String = "127.0.0.1",
                        trusted: TrustedProxies = .loopback) -> ForwardedRequest {
        ForwardedRequest.resolve(peerIP: peer, headers: HTTPHeaders(headers), trusted: trusted)
    }

    @Test func trustedProxyListsParseCIDRBlocks() throws {
        let list = try #require(TrustedProxies(list: "10.0.0.0/8, 192.168.1.7, 2001:db8::/32"))
        #expect(list.contains(ip: "10.255.1.2"))
        #expect(!list.contains(ip: "11.0.0.1"))
        #expect(list.contains(ip: "192.168.1.7"))
        #expect(!list.contains(ip: "192.168.1.8"))
        #expect(list.contains(ip: "2001:db8:ffff::1"))
        #expect(!list.contains(ip: "2001:db9::1"))
        #expect(list.contains(ip: "::ffff:10.1.1.1"), "an IPv4-mapped peer is that IPv4 address")
        #expect(TrustedProxies(list: "none")?.isEmpty == true)
        #expect(TrustedProxies(list: "")?.isEmpty == true)
        #expect(TrustedProxies.loopback.contains(ip: "127.0.0.2"))
        #expect(TrustedProxies.loopback.contains(ip: "::1"))
        for bad in ["10.0.0.0/33", "::/129", "banana", "10.0.0.0/-1", "10.0.0.0/8/8", "1.2.3.4/ 8", "/8"] {
            #expect(TrustedProxies(list: bad) == nil, "\(bad)")
        }
    }

    @Test func xForwardedForGivesTheRightmostUntrustedHop() {
        let result = Self.resolve([("X-Forwarded-For", "198.51.100.9, 203.0.113.7, 127.0.0.1"),
                                   ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "parlor.example")])
        #expect(result == ForwardedRequest(clientIP: "203.0.113.7", scheme: "https", host: "parlor.example"))
        #expect(Self.resolve([("X-Forwarded-For", "127.0.0.5")]).clientIP == "127.0.0.5", "all hops trusted: the leftmost")
        #expect(Self.resolve([("X-Forwarded-For", "10.0.0.1"), ("X-Forwarded-For", "203.0.113.8")]).clientIP == "203.0.113.8")
    }

    /// The one-pass check that skips the lookups must see each forwarding header alone, in any case, among others.
    @Test func eachForwardingHeaderIsFoundInAnyCase() {
        let others = [("Host", "parlor.example"), ("Authorization", "Bearer x"), ("X-Forwarded", "not one of them"),
                      ("Forwarded-For", "neither"), ("X-Request-Id", "abc")]
        #expect(Self.resolve(others) == ForwardedRequest(clientIP: "127.0.0.1"))
        for name in ["X-Forwarded-For", "x-forwarded-for", "X-FORWARDED-FOR"] {
            #expect(Self.resolve(others + [(name, "203.0.113.7")]).clientIP == "203.0.113.7", "\(name)")
        }
        for name in ["X-Forwarded-Proto", "x-forwarded-PROTO"] {
            #expect(Self.resolve(others + [(name, "https")]).scheme == "https", "\(name)")
        }
        #expect(Self.resolve(others + [("x-forwarded-host", "front.example")]).host == "front.example")
        for name in ["Forwarded", "forwarded", "FORWARDED"] {
            #expect(Self.resolve(others + [(name, "for=198.51.100.1")]).clientIP == "198.51.100.1", "\(name)")
        }
        #expect(ForwardedRequest.isForwardingHeader("X-Forwarded-") && !ForwardedRequest.isForwardingHeader("X-Forwarde"))
        #expect(!ForwardedRequest.isForwardingHeader("Forwardedx") && !ForwardedRequest.isForwardingHeader(""))
    }

    @Test func headersFromAnUntrustedPeerAreIgnored() {
        let headers = [("X-Forwarded-For", "203.0.113.7"), ("Forwarded", "for=203.0.113.8;proto=https;host=evil.example"),
                       ("X-Forwarded-Host", "evil.example")]
        #expect(Self.resolve(headers, peer: "192.0.2.50") == ForwardedRequest(clientIP: "192.0.2.50"))
        #expect(Self.resolve(headers, trusted: .none) == ForwardedRequest(clientIP: "127.0.0.1"))
    }

    @Test func forwardedWinsOverXForwardedFor() {
        let result = Self.resolve([("X-Forwarded-For", "198.51.100.2"), ("X-Forwarded-Proto", "http"),
                                   ("Forwarded", #"for=198.51.100.1;proto=https;host="parlor.example:8443""#)])
        #expect(result == ForwardedRequest(clientIP: "198.51.100.1", scheme: "https", host: "parlor.example:8443"))
    }

    @Test func forwardedNodesInAllTheirForms() {
        #expect(Self.resolve([("Forwarded", #"for="[2001:db8::1]:4711""#)]).clientIP == "2001:db8::1")
        #expect(Self.resolve([("Forwarded", #"For="[2001:DB8::1]""#)]).clientIP == "2001:db8::1")
        #expect(Self.resolve([("Forwarded", "for=192.0.2.60:8080;by=127.0.0.1")]).clientIP == "192.0.2.60")
        #expect(Self.resolve([("Forwarded", "for=192.0.2.43, for=127.0.0.1")]).clientIP == "192.0.2.43")
        #expect(Self.resolve([("Forwarded", "for=192.0.2.43, for=198.51.100.17")]).clientIP == "198.51.100.17")
        // Unknown and obfuscated identifiers say nothing we can count: the proxy's own address is used.
        #expect(Self.resolve([("Forwarded", "for=unknown")]).clientIP == "127.0.0.1")
        #expect(Self.resolve([("Forwarded", "for=_hidden, for=127.0.0.1")]).clientIP == "127.0.0.1")
        #expect(Self.resolve([("X-Forwarded-For", "unknown")]).clientIP == "127.0.0.1")
    }

    @Test func malformedValuesNeverCrashAndFallBackToThePeer() {
        let malformed = ["for=\"[2001:db8::1", "for=\"unterminated", "for", ";;;,,,", "=x", "for=[::1", "for=\"\\",
                         "for=1.2.3.4.5", "for=\"[]\"", "for=999.1.1.1", String(repeating: "for=1.1.1.1,", count: 1000),
                         "proto=gopher;host=\"a b\"", "for=\"[2001:db8::1]:\"", "\u{0}\u{7F}é"]
        for value in malformed {
            let result = Self.resolve([("Forwarded", value), ("X-Forwarded-For", value)])
            #expect(result.scheme == nil && result.host == nil, "\(value)")
            #expect(result.clientIP == "127.0.0.1", "\(value)")
        }
        var generator = SeededGenerator(seed: 15)
        let alphabet = Array("for=;,\"[]:\\ 1.2:f_abunknowhstpro=\t")
        for _ in 0..<2000 {
            let length = Int.random(in: 0...40, using: &generator)
            let value = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            let result = Self.resolve([("Forwarded", value)])
            #expect(!result.clientIP.isEmpty)
            _ = Self.resolve([("X-Forwarded-For", value), ("X-Forwarded-Proto", value), ("X-Forwarded-Host", value)])
        }
    }

    @Test func tokensAreRedactedFromLoggedPaths() {
        #expect(LogRedaction.path("/rooms") == "/rooms")
        #expect(LogRedaction.path("/ws?token=SECRET.jwt") == "/ws?token=REDACTED")
        #expect(LogRedaction.path("/a;TOKEN=x/b?access_token=y&z=1") == "/a;TOKEN=REDACTED/b?access_token=REDACTED&z=1")
    }

    @Test func jsonLogLinesAreOneObjectWithTimeLevelMessageAndFields() throws {
        let logger = Logger(level: .info, format: .json)
        let line = try #require(logger.line(.info, "request", ["status": "200", "path": "/a\"b\n", "duration_ms": "1.250"]))
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONParser.parse(Array(line.utf8)).objectValue)
        #expect(object["level"]?.stringValue == "info")
        #expect(object["message"]?.stringValue == "request")
        #expect(object["path"]?.stringValue == "/a\"b\n")
        #expect(object["status"] == .number(200))
        let time = try #require(object["time"]?.stringValue)
        #expect(time.count == 24 && time.hasSuffix("Z") && time.dropFirst(10).hasPrefix("T"), "\(time)")
        #expect(Logger(level: .warning, format: .json).line(.info, "quiet") == nil)
    }
}

/// xorshift: the same "random" inputs on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
