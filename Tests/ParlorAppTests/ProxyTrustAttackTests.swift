#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Issue 34, item 7: with the old default `--trusted-proxies 127.0.0.0/8`, any local process (an `ssh -L` tunnel,
/// socat) was a trusted proxy and could name its own client address with `X-Forwarded-For`, doubling or undoing
/// every per-address limit. Against the `parlor` binary with its defaults: the peer is the client.
@Suite struct ProxyTrustAttackTests {
    @Test func aLocalPeerCannotPickItsAddressForTheConnectionCap() throws {
        let server = try ServerProcess(["--max-connections-per-ip", "2"])
        // Two connections, each claiming another client, then a third.
        var open: [RawConnection] = []
        for client in ["203.0.113.1", "203.0.113.2"] {
            let connection = try RawConnection(port: server.port)
            try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: \(client)\r\n\r\n")
            #expect(try connection.readResponse().status == 200)
            open.append(connection)
        }
        let third = try RawConnection(port: server.port)
        try third.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 203.0.113.3\r\n\r\n")
        let refused = try third.readResponse()
        #expect(refused.status == 429, "a third connection from 127.0.0.1 got \(refused.status)")
        #expect(refused.errorCode == "http:error:too-many-connections")
        withExtendedLifetime(open) {}
    }

    /// The /auth rate (burst 3, then 1 a second): a new forged address per request does not reset the count.
    @Test func aLocalPeerCannotPickItsAddressForTheAuthRate() throws {
        let server = try ServerProcess(["--auth-rate", "1"])
        let start = Date()
        var granted = 0
        for attempt in 0..<8 {
            let headers = ["X-Forwarded-For": "198.51.100.\(attempt)", "Forwarded": "for=198.51.100.\(attempt + 100)"]
            let response = try RawConnection.oneRequest(server.port, "POST", "/auth", json: #"{"name":"u\#(attempt)"}"#, headers: headers)
            #expect(response.status == 200 || response.errorCode == "auth:error:rate-limited", "\(response.text)")
            if response.status == 200 { granted += 1 }
        }
        // Each forged address counted anew would grant all eight; one address gets its burst plus a token a second.
        let elapsed = Date().timeIntervalSince(start)
        #expect(granted < 8 && granted <= 3 + Int(elapsed.rounded(.up)), "\(granted) of 8 granted in \(elapsed) s")
    }

    /// A proxy left out of `--trusted-proxies` is a silent misconfiguration: the server says so once, not per request.
    @Test func forwardingHeadersFromAnUntrustedPeerAreWarnedOfOnce() throws {
        let server = try ServerProcess()
        for (index, header) in ["X-Forwarded-For: 203.0.113.9", "Forwarded: for=203.0.113.9", "X-Forwarded-Host: a.example"].enumerated() {
            let connection = try RawConnection(port: server.port)
            try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\(header)\r\n\r\n")
            #expect(try connection.readResponse().status == 200, "request \(index)")
        }
        #expect(kill(server.pid, SIGTERM) == 0)
        #expect(server.child.waitForExit(timeout: 10) == 0)
        let log = server.child.errorOutput()
        let warnings = log.split(separator: "\n").filter { $0.contains("ignoring forwarding headers from a peer that is not a trusted proxy") }
        #expect(warnings.count == 1, "\(log)")
        #expect(warnings.first?.contains("127.0.0.1") == true)
    }

    /// Trusting the local proxy is one option away, and then its headers count as before.
    @Test func aConfiguredProxyIsStillBelieved() throws {
        let server = try ServerProcess(["--trusted-proxies", "127.0.0.1/32", "--auth-rate", "1"])
        for attempt in 0..<5 {
            let response = try RawConnection.oneRequest(server.port, "POST", "/auth", json: #"{"name":"p\#(attempt)"}"#,
                                                        headers: ["X-Forwarded-For": "198.51.100.\(attempt)"])
            #expect(response.status == 200, "client \(attempt) behind the proxy has a rate of its own: \(response.text)")
        }
    }
}
