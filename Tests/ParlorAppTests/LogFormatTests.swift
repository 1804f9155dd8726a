#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Logs for machines (issue 15): `--log-format json`, request ids, and no tokens in any log line. Run against the
/// binary, whose logs go to stderr.
@Suite struct LogFormatTests {
    /// Runs `body` against `parlor serve --log-format json --log-level info`, stops it, and returns its log lines.
    static func jsonLogs(_ body: (Int) throws -> Void) throws -> [[String: Any]] {
        let server = try ServerProcess(["--log-format", "json", "--log-level", "info"])
        try body(server.port)
        kill(server.pid, SIGTERM)
        #expect(server.child.waitForExit(timeout: 10) == 0)
        let text = server.child.errorOutput()
        return try text.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }

    @Test func jsonLinesCarryTimeLevelMessageAndTheRequestIdOfEachResponse() throws {
        var generated = ""
        let lines = try Self.jsonLogs { port in
            let given = try RawConnection.oneRequest(port, "GET", "/nope", headers: ["X-Request-Id": "edge-42.a_b"])
            #expect(given.status == 404)
            #expect(given.header("X-Request-Id") == "edge-42.a_b")
            #expect(given.object["request_id"] as? String == "edge-42.a_b", "\(given.text)")
            // An unsafe incoming id (spaces, quotes, too long) is replaced by a generated one.
            let unsafe = try RawConnection.oneRequest(port, "POST", "/auth", json: "{", headers: ["X-Request-Id": "a b\"c"])
            #expect(unsafe.status == 400)
            generated = try #require(unsafe.header("X-Request-Id"))
            #expect(generated != "a b\"c" && !generated.isEmpty)
            #expect(unsafe.object["request_id"] as? String == generated)
            let ok = try RawConnection.oneRequest(port, "GET", "/healthz")
            #expect(ok.status == 200 && ok.header("X-Request-Id")?.isEmpty == false)
        }
        let requests = lines.filter { $0["message"] as? String == "request" }
        #expect(requests.count == 3, "\(lines)")
        for line in lines {
            let time = line["time"] as? String ?? ""
            #expect(time.count == 24 && time.hasSuffix("Z"), "\(line)")
            #expect(line["level"] as? String != nil)
        }
        let notFound = try #require(requests.first { $0["request_id"] as? String == "edge-42.a_b" })
        #expect(notFound["status"] as? Int == 404)
        #expect(notFound["path"] as? String == "/nope")
        #expect(notFound["client"] as? String == "127.0.0.1")
        #expect(notFound["level"] as? String == "info")
        #expect(requests.contains { $0["request_id"] as? String == generated && $0["status"] as? Int == 400 })
        #expect(lines.contains { $0["message"] as? String == "parlor started" })
    }

    @Test func tokensNeverReachTheLog() throws {
        let secret = "SECRETeyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl"
        let lines = try Self.jsonLogs { port in
            for path in ["/ws?token=\(secret)", "/rooms?token=\(secret)", "/rooms/RM-x?page_size=1&token=\(secret)",
                         "/ws%3Ftoken=\(secret)", "/x;token=\(secret)"] {
                _ = try RawConnection.oneRequest(port, "GET", path, headers: ["Authorization": "Bearer \(secret)"])
            }
            let connection = try RawConnection(port: port)
            try connection.send("GET /ws?token=\(secret) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\n"
                                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            #expect(try connection.readResponse().status == 401)
        }
        #expect(lines.filter { $0["message"] as? String == "request" }.count == 6, "\(lines)")
        let text = lines.map { "\($0)" }.joined(separator: "\n")
        #expect(!text.contains("SECRET"), "\(text)")
        #expect(text.contains("REDACTED"), "the path with a decoded ?token= is logged redacted")
    }
}
