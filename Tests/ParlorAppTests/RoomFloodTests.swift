#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// Vulnerability: an anonymous client filled the server with year-long rooms (503 server-full for everyone, across
/// restarts). Against the binary with its default limits: one address is cut at its cap, others still get rooms.
@Suite struct RoomFloodTests {
    /// One request on a fresh connection from `source` (a loopback address standing for a client address).
    private func request(_ port: Int, _ method: String, _ path: String, json: String? = nil, token: String? = nil,
                         from source: String = "127.0.0.1") throws -> TestResponse {
        try RawConnection.oneRequest(port, method, path, json: json, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:],
                                     from: source)
    }

    private func createRoom(_ port: Int, ttl: Int = 86_400, token: String? = nil, from source: String = "127.0.0.1") throws -> TestResponse {
        try request(port, "POST", "/rooms", json: #"{"display_name":"flood","properties":{"ttl":\#(ttl)}}"#, token: token, from: source)
    }

    @Test func anonymousRoomFloodFromOneAddressIsCutAtItsCap() throws {
        let server = try ServerProcess()
        let baseline = try server.residentBytes()
        let cpuBefore = try server.cpuSeconds()
        // Anonymous requests and requests under freshly minted names (open mode): the cap counts them all.
        var tokens: [String] = []
        for index in 0..<5 {
            let auth = try request(server.port, "POST", "/auth", json: #"{"name":"flooder\#(index)"}"#)
            if let jwt = auth.object["jwt"] as? String { tokens.append(jwt) }
        }
        #expect(tokens.count == 5)
        var created = 0
        var refused: [String: Int] = [:]
        for index in 0..<300 {
            let response = try createRoom(server.port, token: index % 3 == 0 ? tokens[index % tokens.count] : nil)
            if response.status == 201 {
                created += 1
            } else {
                #expect(response.status == 429, "\(response.status) \(response.text)")
                refused[response.errorCode ?? "?", default: 0] += 1
            }
        }
        #expect(created == 20, "the default --max-rooms-per-ip is 20")
        #expect(refused.values.reduce(0, +) == 280)
        // Another client is not locked out.
        let other = try createRoom(server.port, from: "127.0.0.2")
        #expect(other.status == 201, "\(other.status) \(other.text)")
        #expect(try request(server.port, "GET", "/healthz").status == 200)
        #expect(try !ServerProcess.checksMemory || server.residentBytes() - baseline < 64 * ServerProcess.mebibyte)
        #expect(try server.cpuSeconds() - cpuBefore < 5)
    }

    @Test func ttlAboveTheMaximumIsRefused() throws {
        let server = try ServerProcess()
        let year = try createRoom(server.port, ttl: 31_536_000)
        #expect(year.status == 400)
        #expect(year.errorCode == "request:error:invalid-field")
        #expect((year.object["detail"] as? String)?.contains("86400") == true, "\(year.text)")
        #expect(try createRoom(server.port, ttl: 86_400).status == 201)

        let lowered = try ServerProcess(["--max-room-ttl", "600"])
        #expect(try createRoom(lowered.port, ttl: 601).status == 400)
        #expect(try createRoom(lowered.port, ttl: 600).status == 201)
    }

    @Test func creationRatePerAddressIsLimitedWithRetryAfter() throws {
        let server = try ServerProcess(["--room-create-rate", "1", "--max-rooms-per-ip", "0"])
        // A burst of twice the per-minute rate, then 429 with Retry-After.
        #expect(try createRoom(server.port).status == 201)
        #expect(try createRoom(server.port).status == 201)
        let refused = try createRoom(server.port)
        #expect(refused.status == 429)
        #expect(refused.errorCode == "room:error:rate-limited")
        #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1)
        #expect(try createRoom(server.port, from: "127.0.0.2").status == 201)
    }

    @Test func theCapSurvivesARestart() throws {
        let directory = NSTemporaryDirectory() + "parlor-flood-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["--database", directory + "/parlor.db", "--max-rooms-per-ip", "3", "--room-create-rate", "0"]
        let first = try ServerProcess(arguments)
        for _ in 0..<3 { #expect(try createRoom(first.port).status == 201) }
        #expect(try createRoom(first.port).status == 429)
        kill(first.pid, SIGKILL)
        _ = first.child.waitForExit(timeout: 5)

        let second = try ServerProcess(arguments)
        let refused = try createRoom(second.port)
        #expect(refused.status == 429, "\(refused.status) \(refused.text)")
        #expect(refused.errorCode == "room:error:too-many-rooms")
        #expect(try createRoom(second.port, from: "127.0.0.2").status == 201)
    }

    @Test func storedRoomsAboveTheMaximumTTLAreCutBackAtStart() throws {
        let directory = NSTemporaryDirectory() + "parlor-flood-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try ServerProcess(["--database", directory + "/parlor.db"])
        let id = try #require(try createRoom(first.port, ttl: 86_400).object["id"] as? String)
        kill(first.pid, SIGKILL)
        _ = first.child.waitForExit(timeout: 5)

        // As after a flood from before the limit: a lower maximum applies to the rooms already stored.
        let second = try ServerProcess(["--database", directory + "/parlor.db", "--max-room-ttl", "600"])
        let room = try request(second.port, "GET", "/rooms/\(id)")
        #expect((room.object["properties"] as? [String: Any])?["ttl"] as? Int == 600, "\(room.text)")
    }

    @Test func addressesAreCountedPerIPv4AddressAndPerIPv6Network() {
        #expect(ClientAddress.limitKey("127.0.0.1") == "127.0.0.1")
        #expect(ClientAddress.limitKey("::ffff:10.0.0.7") == "10.0.0.7")
        #expect(ClientAddress.limitKey("2001:db8:1:2::1") == ClientAddress.limitKey("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(ClientAddress.limitKey("2001:db8:1:2::1") != ClientAddress.limitKey("2001:db8:1:3::1"))
        #expect(ClientAddress.limitKey("2001:db8:1:2::1") == "2001:db8:1:2::/64")
    }

    @Test func defaultTTLAboveTheMaximumIsAConfigurationError() {
        #expect(throws: ConfigurationError.self) {
            _ = try ParlorApplication.inMemory { $0.rooms.defaultRoomTTL = 900; $0.rooms.maxRoomTTL = 600 }
        }
    }
}
