import Foundation
import Testing
import ParlorApp

/// Open connections per client address are capped; a refused one is told why, and room frees up on close.
@Suite struct ConnectionLimitTests {
    @Test func connectionsPerAddressAreCapped() throws {
        // Direct clients (trusting none is the default; were 127.0.0.1 a trusted proxy, the cap would wait for the first
        // request: TrustedProxyTests.connectionCapCountsTheForwardedAddressOnItsFirstRequest).
        try withServer({ $0.http.maxConnectionsPerIP = 3; $0.http.trustedProxies = .none }) { app in
            var open = try (0..<3).map { _ in try RawConnection(port: app.port) }
            for connection in open {
                try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try connection.readResponse().status == 200)
            }
            do {
                let refused = try RawConnection(port: app.port)
                let answer = try refused.readResponse()
                #expect(answer.status == 429)
                #expect(answer.errorCode == "http:error:too-many-connections")
                #expect(try refused.waitForClose())
            }

            // WebSockets count too, and closing one makes room.
            open.removeLast()
            var admitted: TestWebSocket?
            for _ in 0..<200 where admitted == nil {
                admitted = try? TestWebSocket(port: app.port, token: try token(app, "late"))
                if admitted == nil { usleep(5000) }  // the server counts the close when it sees it: bounded retry
            }
            #expect(admitted != nil)
            #expect(throws: (any Error).self) { try TestWebSocket(port: app.port, token: nil) }
        }
    }
}
