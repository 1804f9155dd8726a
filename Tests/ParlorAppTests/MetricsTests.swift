import Foundation
import ParlorApp
import Testing

/// GET /metrics: what it reports agrees with the API after a scripted session, the exposition parses strictly,
/// and it is served to the admin token on the main port and to anyone on --metrics-address.
@Suite struct MetricsTests {
    static let adminToken = "metrics-admin-token-0123456789"

    static func configure(_ configuration: inout AppConfiguration) {
        configuration.adminToken = adminToken
        configuration.metricsAddress = ("127.0.0.1", 0)
        configuration.authRatePerIP = 1  // burst 3: the fourth /auth from one address in a second is refused
    }

    /// Scrapes the metrics listener (whose own connections are not counted).
    static func scrape(_ app: ParlorApplication) throws -> PrometheusText {
        let port = try #require(app.metricsServer?.port)
        let response = try RawConnection.oneRequest(port, "GET", "/metrics")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        return try PrometheusText(String(decoding: response.body, as: UTF8.self))
    }

    @Test func gaugesAndCountersAgreeWithTheAPIAfterAScriptedSession() throws {
        try withServer(Self.configure) { app in
            let alice = try TestWebSocket(app, name: "alice")
            let bob = try TestWebSocket(app, name: "bob")
            let carol = try TestWebSocket(app, name: "carol")
            let first = try createRoom(app, "First")
            let second = try createRoom(app, "Second")
            _ = try alice.join(first)
            _ = try bob.join(first)
            _ = try carol.join(second)
            _ = try bob.call("conversation:leave", ["cid": first])
            #expect(try http(app, "GET", "/rooms/\(first)").status == 200)
            #expect(try http(app, "GET", "/rooms/no-such-room").status == 404)
            #expect(try http(app, "GET", "/no/such/path").status == 404)
            #expect(try http(app, "DELETE", "/healthz").status == 405)
            #expect(try http(app, "BREW", "/healthz").status == 405)
            // From another address, /auth until the limit answers 429.
            var authOK = 0, authRefused = 0
            while authRefused == 0, authOK < 10 {
                let status = try RawConnection.oneRequest(app.port, "POST", "/auth", json: #"{"name":"dave\#(authOK)"}"#, from: "127.0.0.9").status
                if status == 200 { authOK += 1 } else if status == 429 { authRefused += 1 } else { Issue.record("auth answered \(status)") }
            }
            #expect(authRefused == 1)
            for client in [alice, bob, carol] { try client.sync() }  // every event is out before the scrape

            // The HTTP connections of the requests above close as their clients let go: wait for the count to settle.
            var metrics = try Self.scrape(app)
            let deadline = Date().addingTimeInterval(5)
            while try metrics.value("parlor_connections", ["kind": "http"]) != 0, Date() < deadline {
                metrics = try Self.scrape(app)
            }
            #expect(try metrics.value("parlor_connections", ["kind": "http"]) == 0)
            #expect(try metrics.value("parlor_connections", ["kind": "websocket"]) == 3)
            #expect(app.server.openConnectionCount == 3)

            // Gauges against what the API reports.
            let rooms = try http(app, "GET", "/rooms").array
            #expect(rooms.count == 2)
            let memberSum = rooms.compactMap { $0["member_count"] as? Int }.reduce(0, +)
            #expect(memberSum == 2)
            #expect(try metrics.value("parlor_rooms_open") == Double(rooms.count))
            #expect(try metrics.value("parlor_members_joined") == Double(memberSum))

            // Every room event the clients received, and no more.
            let received = [alice, bob, carol].map { client in
                client.log.filter { ($0["type"] as? String)?.hasPrefix("member:") == true }.count
            }.reduce(0, +)
            #expect(received >= 5)
            #expect(try metrics.value("parlor_events_delivered_total") == Double(received))

            // Requests by route pattern, never by raw path.
            func requests(_ route: String, _ method: String, _ status: Int) throws -> Double {
                try metrics.value("parlor_requests_total", ["route": route, "method": method, "status": String(status)])
            }
            #expect(try requests("/auth", "POST", 200) == Double(3 + authOK))
            #expect(try requests("/auth", "POST", 429) == 1)
            #expect(try requests("/ws", "GET", 101) == 3)
            #expect(try requests("/rooms", "POST", 201) == 2)
            #expect(try requests("/rooms/{id}", "GET", 200) == 1)
            #expect(try requests("/rooms/{id}", "GET", 404) == 1)
            #expect(try requests("unmatched", "GET", 404) == 1)
            #expect(try requests("/healthz", "DELETE", 405) == 1)
            #expect(try requests("/healthz", "other", 405) == 1, "a method the server does not know is no label value")
            for sample in metrics.all("parlor_requests_total") {
                let route = sample.labels["route"] ?? ""
                #expect(!route.contains(first) && !route.contains(second) && !route.contains("no-such"), "raw path in \(route)")
            }
            #expect(try metrics.value("parlor_rate_limited_total", ["limit": "auth"]) == 1)
            #expect(try metrics.value("parlor_rate_limited_total", ["limit": "room_create"]) == 0)
            #expect(try metrics.value("parlor_webhook_failures_total") == 0)

            // Histograms: three joins; every batch committed at least once.
            try Self.checkHistogram(metrics, "parlor_join_seconds", count: 3)
            try Self.checkHistogram(metrics, "parlor_commit_seconds", count: nil)

            // Process numbers from /proc.
            #expect(try metrics.value("process_resident_memory_bytes") > 1_000_000)
            #expect(try metrics.value("process_cpu_seconds_total") > 0)
            #expect(try metrics.value("process_open_fds") >= 4)
            let started = try metrics.value("process_start_time_seconds")
            #expect(started > Date().timeIntervalSince1970 - 24 * 3600 && started <= Date().timeIntervalSince1970 + 1)
        }
    }

    /// Buckets ascend with non-decreasing counts, `le="+Inf"` equals `_count`, and the sum is positive when counted.
    static func checkHistogram(_ metrics: PrometheusText, _ name: String, count expected: Int?) throws {
        #expect(metrics.types[name] == "histogram")
        let buckets = metrics.all(name + "_bucket").map { sample -> (Double, Double) in
            let bound = sample.labels["le"] == "+Inf" ? Double.infinity : Double(sample.labels["le"] ?? "") ?? .nan
            return (bound, sample.value)
        }
        #expect(buckets.count >= 8)
        #expect(buckets.allSatisfy { !$0.0.isNaN })
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.0 < $1.0 && $0.1 <= $1.1 }, "\(name) buckets out of order")
        #expect(buckets.last?.0 == .infinity)
        let count = try metrics.value(name + "_count")
        #expect(buckets.last?.1 == count)
        if let expected { #expect(count == Double(expected)) } else { #expect(count >= 1) }
        #expect(try metrics.value(name + "_sum") > 0)
        #expect(buckets.first.map { $0.0 <= 0.001 } == true, "\(name) has no millisecond-scale bucket")
    }

    @Test func mainListenerServesMetricsToTheAdminTokenOnly() throws {
        try withServer(Self.configure) { app in
            let missing = try http(app, "GET", "/metrics")
            #expect(missing.status == 403)
            #expect(missing.errorCode == "auth:error:admin-required")
            #expect(try http(app, "GET", "/metrics", headers: ["Authorization": "Bearer wrong-token-0123456789abc"]).status == 403)
            let granted = try http(app, "GET", "/metrics", headers: ["Authorization": "Bearer \(Self.adminToken)"])
            #expect(granted.status == 200)
            #expect(granted.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let metrics = try PrometheusText(String(decoding: granted.body, as: UTF8.self))
            #expect(try metrics.value("parlor_requests_total", ["route": "/metrics", "method": "GET", "status": "403"]) == 2)
            #expect(try metrics.value("parlor_connections", ["kind": "http"]) >= 1)  // this request's own connection
        }
    }

    @Test func metricsListenerNeedsNoTokenAndServesNothingElse() throws {
        try withServer(Self.configure) { app in
            let port = try #require(app.metricsServer?.port)
            #expect(port != app.port)
            #expect(try RawConnection.oneRequest(port, "GET", "/metrics").status == 200)
            #expect(try RawConnection.oneRequest(port, "GET", "/healthz").status == 200)
            #expect(try RawConnection.oneRequest(port, "GET", "/rooms").status == 404)
            #expect(try RawConnection.oneRequest(port, "POST", "/auth", json: #"{"name":"eve"}"#).status == 404)
            // Scrapes do not count themselves.
            let metrics = try Self.scrape(app)
            #expect(metrics.all("parlor_requests_total").isEmpty)
            #expect(try metrics.value("parlor_connections", ["kind": "http"]) == 0)
        }
    }

    @Test func noMetricsRouteWithoutAnAdminToken() throws {
        try withServer { app in
            #expect(app.metricsServer == nil)
            let status = try http(app, "GET", "/metrics").status
            #expect(status == 404)
        }
    }

    @Test func binaryPrintsTheMetricsAddressAfterTheListeningLine() throws {
        let server = try ServerProcess(["--metrics-address", "127.0.0.1:0"])
        let line = try server.child.readLine()
        let prefix = "metrics on http://127.0.0.1:"
        #expect(line.hasPrefix(prefix))
        let port = try #require(Int(line.dropFirst(prefix.count)))
        let response = try RawConnection.oneRequest(port, "GET", "/metrics")
        #expect(response.status == 200)
        let metrics = try PrometheusText(String(decoding: response.body, as: UTF8.self))
        #expect(try metrics.value("parlor_rooms_open") == 0)
        #expect(try metrics.value("process_resident_memory_bytes") > 0)
    }

    /// The dashboard queries only metrics the server exports, and docs/metrics.md lists every family it exports.
    @Test func dashboardAndDocsMatchTheExposition() throws {
        let metrics = try withServer(Self.configure) { app in try Self.scrape(app) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dashboard = try String(contentsOf: root.appendingPathComponent("docs/grafana-dashboard.json"), encoding: .utf8)
        _ = try JSONSerialization.jsonObject(with: Data(dashboard.utf8))
        let used = Set(dashboard.matches(of: /\b(?:parlor|process)_[a-z_]+/).map { String($0.output) })
        #expect(used.count >= 10)
        for name in used {
            #expect(PrometheusText.family(of: name, types: metrics.types) != nil, "the dashboard uses \(name), which is not exported")
        }
        let documentation = try String(contentsOf: root.appendingPathComponent("docs/metrics.md"), encoding: .utf8)
        for family in metrics.types.keys {
            #expect(documentation.contains("| `\(family)` |"), "docs/metrics.md does not list \(family)")
        }
    }

    @Test func metricsAddressIsValidated() throws {
        for bad in ["9090", "127.0.0.1:", "127.0.0.1:70000", "::1:9090", ":9090"] {
            #expect(throws: (any Error).self, "\(bad)") {
                try AppConfiguration.parse(arguments: ["--metrics-address", bad], environment: [:])
            }
        }
        // Listeners share ports with SO_REUSEPORT: the main port again would silently split the clients.
        var samePort = AppConfiguration.testing()
        samePort.http.port = 47_811
        samePort.metricsAddress = ("127.0.0.1", 47_811)
        #expect(throws: (any Error).self) { try buildApplication(samePort).shutdown() }
        let parsed = try AppConfiguration.parse(arguments: ["--metrics-address", "[::1]:9464"], environment: [:])
        #expect(parsed.metricsAddress?.host == "::1" && parsed.metricsAddress?.port == 9464)
    }
}
