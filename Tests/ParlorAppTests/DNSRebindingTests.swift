#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec
import ParlorHTTP
import Testing

/// Issue 34, item 11: DNS rebinding. `/ws` compared Origin with the request's own Host, so a page on `evil.example`
/// whose name now points at the server (Host and Origin both `evil.example`) could upgrade and act. Against the
/// `parlor` binary: WebSocket upgrades and POST/PUT/PATCH/DELETE must name a host the server was given.
@Suite struct DNSRebindingTests {
    static func upgrade(_ port: Int, host: String, origin: String?, token: String) throws -> TestResponse {
        let connection = try RawConnection(port: port)
        let key = Base64.encode((0..<16).map { _ in UInt8.random(in: 0...255) })
        var request = "GET /ws?token=\(token) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        try connection.send(request + "\r\n")
        return try connection.readResponse()
    }

    static func post(_ port: Int, _ path: String, host: String, json: String) throws -> TestResponse {
        let connection = try RawConnection(port: port)
        try connection.send("POST \(path) HTTP/1.1\r\nHost: \(host)\r\nOrigin: http://\(host)\r\nConnection: close\r\n"
                            + "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)")
        return try connection.readResponse()
    }

    static func token(_ port: Int) throws -> String {
        try #require(RawConnection.oneRequest(port, "POST", "/auth", json: #"{"name":"rebound"}"#).object["jwt"] as? String)
    }

    @Test func aReboundNameCannotUpgradeOrAct() throws {
        let server = try ServerProcess()
        let port = server.port
        let token = try Self.token(port)
        for host in ["evil.example", "evil.example:\(port)", "EVIL.example.", "127.0.0.1.nip.io:\(port)"] {
            let upgraded = try Self.upgrade(port, host: host, origin: "http://\(host)", token: token)
            #expect(upgraded.status == 421, "/ws with Host \(host): \(upgraded.status)")
            #expect(upgraded.errorCode == "http:error:host-not-allowed", "\(upgraded.text)")
            let created = try Self.post(port, "/rooms", host: host, json: #"{"display_name":"rebound"}"#)
            #expect(created.status == 421, "POST /rooms with Host \(host): \(created.status)")
            let deleting = try RawConnection(port: port)
            try deleting.send("DELETE /rooms/RM-x HTTP/1.1\r\nHost: \(host)\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
            let deleted = try deleting.readResponse()
            #expect(deleted.status == 421, "DELETE with Host \(host): \(deleted.status)")
        }
        // Reads stay open (tokens are bearer headers a rebound page does not have), so a stray name can still GET.
        let read = try RawConnection(port: port)
        try read.send("GET /rooms HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        #expect(try read.readResponse().status == 200)
    }

    /// DNS rebinding needs a name: IP literals (a LAN, Docker), localhost and the machine's own name keep working.
    @Test func addressesLocalhostAndTheMachineNamePass() throws {
        let server = try ServerProcess()
        let port = server.port
        let token = try Self.token(port)
        var hosts = ["127.0.0.1:\(port)", "127.0.0.1", "[::1]:\(port)", "192.168.1.20:8080", "localhost:\(port)", "LocalHost.", "localhost"]
        if let machine = HostAllowlist.machineHostName() { hosts.append("\(machine):\(port)") }
        for host in hosts {
            let upgraded = try Self.upgrade(port, host: host, origin: "http://\(host)", token: token)
            #expect(upgraded.status == 101, "/ws with Host \(host): \(upgraded.status) \(upgraded.text)")
            #expect(try Self.post(port, "/rooms", host: host, json: #"{"display_name":"ok"}"#).status == 201, "POST with Host \(host)")
        }
    }

    @Test func publicURLAndAllowedHostsNameTheServer() throws {
        let server = try ServerProcess(["--public-url", "https://Rooms.Example.com/", "--allowed-hosts", "other.example, lan-box"])
        let port = server.port
        let token = try Self.token(port)
        for host in ["rooms.example.com", "rooms.example.com:443", "other.example:\(port)", "lan-box"] {
            #expect(try Self.post(port, "/rooms", host: host, json: #"{"display_name":"named"}"#).status == 201, "Host \(host)")
        }
        #expect(try Self.post(port, "/rooms", host: "evil.example", json: #"{"display_name":"x"}"#).status == 421)
        // The public URL is the server's own origin, also when a TLS proxy in front passes its own upstream Host.
        #expect(try Self.upgrade(port, host: "127.0.0.1:\(port)", origin: "https://rooms.example.com", token: token).status == 101)
        #expect(try Self.upgrade(port, host: "127.0.0.1:\(port)", origin: "http://rooms.example.com", token: token).status == 403)

        let open = try ServerProcess(["--allowed-hosts", "*"])
        let anyToken = try Self.token(open.port)
        #expect(try Self.upgrade(open.port, host: "evil.example", origin: "http://evil.example", token: anyToken).status == 101,
                "--allowed-hosts * turns the check off")
    }

    @Test func badOptionValuesAreRefused() throws {
        for arguments in [["--public-url", "rooms.example.com"], ["--public-url", "ftp://x"], ["--public-url", "https://"],
                          ["--allowed-hosts", "https://x.example/"]] {
            let result = try CLITests.runCapturingErrors(["serve"] + arguments + ["--database", ":memory:", "--port", "0"])
            #expect(result.status == 2, "\(arguments): exit \(result.status)")
        }
    }
}
