import Foundation
import Testing
import ParlorApp

/// Hostile input that docs/security.md lists: header injection, path traversal, SQL metacharacters, deep JSON.
@Suite struct AdversarialInputTests {
    @Test func headerInjectionThroughQueryOrOriginDoesNotReachResponseHeaders() throws {
        try withServer({ $0.http.corsAllowedOrigins = ["http://good.example"] }) { app in
            _ = try createRoom(app, "a")
            _ = try createRoom(app, "b")
            let response = try http(app, "GET", "/rooms?page_size=1&x=%0d%0aSet-Cookie:%20pwned=1")
            #expect(response.status == 200)
            #expect(response.header("Set-Cookie") == nil)
            #expect(response.header("Link")?.contains("\r") == false)
            #expect(response.header("Link")?.contains("%0D%0ASet-Cookie") == true, "the value is carried percent-encoded")
            let evil = try http(app, "GET", "/rooms", headers: ["Origin": "http://evil.example"])
            #expect(evil.header("Access-Control-Allow-Origin") == nil)
        }
    }

    @Test(arguments: ["/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/app.js/../../../etc/passwd",
                      "/..%2fParlorApp%2fWeb%2fapp.js", "/Web/app.js", "/%00", "//etc/passwd"])
    func pathTraversalFindsNothing(path: String) throws {
        try withServer { app in
            let response = try http(app, "GET", path)
            #expect([400, 404].contains(response.status), "\(path) → \(response.status)")
            #expect(!response.text.contains("root:"))
        }
    }

    @Test func sqlMetacharactersAreStoredAsText() throws {
        let nasty = #"Robert'); DROP TABLE users;-- "x" \ %_"#
        try withServer { app in
            let auth = try http(app, "POST", "/auth", json: #"{"name":"Robert'); DROP TABLE users;-- \"x\" \\ %_"}"#)
            #expect(auth.status == 200)
            #expect(auth.object["name"] as? String == nasty)
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"1' OR '1'='1","properties":{"ttl":60}}"#)
            #expect(created.object["display_name"] as? String == "1' OR '1'='1")
            let room = try #require(created.object["id"] as? String)
            #expect(try http(app, "GET", "/rooms/" + "RM-x'%20OR%201=1--").errorCode == "room:error:not-found")
            let client = try TestWebSocket(port: app.port, token: try #require(auth.object["jwt"] as? String))
            #expect(memberNames(try client.join(room)) == [nasty])
            #expect(errorCode(try client.request("conversation:join", ["cid": "' OR 1=1 --"])) == "room:error:not-found")
            #expect(errorCode(try client.request("session:resume", ["session_id": "x' OR '1'='1"])) == "session:error:not-found")
            #expect(errorCode(try client.request("conversation:members", ["cid": room, "cursor": "' OR 1=1"])) == "request:error:invalid-field")
            // The tables are all still there and hold what was sent.
            #expect(try http(app, "GET", "/rooms").array.count == 1)
            #expect(try http(app, "POST", "/auth", json: #"{"name":"after"}"#).status == 200)
        }
    }

    @Test func manyKeysAndRepeatedKeys() throws {
        try withServer { app in
            // Thousands of distinct keys (the fuzzer found these used to cost n²) are parsed; a repeated key's last value wins.
            let filler = (0..<6000).map { #""k\#($0)":0"# }.joined(separator: ",")
            let wide = try http(app, "POST", "/auth", json: #"{\#(filler),"name":"first","name":"last"}"#)
            #expect(wide.status == 200)
            #expect(wide.object["name"] as? String == "last")
        }
    }

    @Test func deeplyNestedJSONIsRefusedWithoutHarm() throws {
        try withServer { app in
            let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            let overHTTP = try http(app, "POST", "/auth", json: #"{"name":\#(String(repeating: "[", count: 60_000))"#)
            #expect(overHTTP.errorCode == "request:error:invalid-json")
            let client = try TestWebSocket(app, name: "nester")
            // 15,000 levels: far past the parser's 64, yet under the 32 KiB request limit.
            try client.sendText(String(deep.prefix(15_000)) + String(deep.suffix(15_000)))
            let reply = try client.next { $0["type"] as? String == "error" }
            #expect((reply["body"] as? [String: Any])?["code"] as? String == "request:error:invalid-json")
            try client.sync()
        }
    }
}
