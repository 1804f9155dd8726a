import Foundation
import Testing
import ParlorApp

/// Issue 34, item 6, against the `parlor` binary: one address minted hundreds of identities (open mode) and sent
/// chat and reactions through all of them into one room, each within its own per-member rates, and filled a room.
/// Now chat and reactions are also rated per address per room, and members per address per room may be capped.
@Suite struct AddressFloodTests {
    static let admin = "admin-token-for-tests-0123456789"

    /// parlor_rate_limited_total{limit=`limit`} from /metrics.
    static func rateLimited(_ port: Int, _ limit: String) throws -> Int? {
        let response = try RawConnection.oneRequest(port, "GET", "/metrics", headers: ["Authorization": "Bearer \(admin)"])
        let prefix = #"parlor_rate_limited_total{limit="\#(limit)"} "#
        let line = response.text.split(separator: "\n").first { $0.hasPrefix(prefix) }
        return line.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    /// `count` identities from `source`, each connected and joined to `room`.
    private func members(_ port: Int, _ room: String, _ count: Int, prefix: String, from source: String = "127.0.0.1") throws -> [TestWebSocket] {
        try (0..<count).map { index in
            let grant = try RawConnection.oneRequest(port, "POST", "/auth", json: #"{"name":"\#(prefix)\#(index)"}"#, from: source)
            let socket = try TestWebSocket(port: port, token: try #require(grant.object["jwt"] as? String), source: source)
            _ = try socket.join(room)
            return socket
        }
    }

    /// Every socket sends one request at once (all written before any reply is read); returns the reply types.
    private func burst(_ sockets: [TestWebSocket], _ type: String, _ body: [String: Any]) throws -> [String] {
        let tid = "burst-\(UUID().uuidString)"
        let frame = String(decoding: try JSONSerialization.data(withJSONObject: ["type": type, "tid": tid, "body": body]), as: UTF8.self)
        for socket in sockets { try socket.sendText(frame) }
        return try sockets.map { socket in
            let reply = try socket.next { $0["tid"] as? String == tid }
            return errorCode(reply) ?? (reply["type"] as? String ?? "?")
        }
    }

    @Test func chatAndReactionsFromManyIdentitiesOfOneAddressAreRatedPerAddress() throws {
        let server = try ServerProcess(["--auth-rate", "0", "--admin-token", Self.admin])
        let port = server.port
        let room = try #require(try RawConnection.oneRequest(port, "POST", "/rooms", json: #"{"display_name":"Town"}"#).object["id"] as? String)
        let flood = try members(port, room, 15, prefix: "sock")
        let neighbour = try members(port, room, 1, prefix: "neighbour", from: "127.0.0.2")[0]
        let baseline = try server.residentBytes()
        let cpuBefore = try server.cpuSeconds()

        let started = Date()
        let messages = try burst(flood, "message:send", ["cid": room, "text": "spam"])
        let reactions = try burst(flood, "reaction:send", ["cid": room, "emoji": "🎉"])
        // Another address in the same room, in the same second, is not held back.
        #expect(try neighbour.request("message:send", ["cid": room, "text": "hello"])["type"] as? String == "message:send:success")
        #expect(try neighbour.request("reaction:send", ["cid": room, "emoji": "👍"])["type"] as? String == "reaction:send:success")
        let elapsed = Date().timeIntervalSince(started)

        let sent = messages.filter { $0 == "message:send:success" }.count
        let reacted = reactions.filter { $0 == "reaction:send:success" }.count
        // Both windows are a second long: within one second exactly the defaults get through (5 and 10).
        let seconds = Int(elapsed.rounded(.up))
        if elapsed < 1 {
            #expect(sent == 5, "\(messages)")
            #expect(reacted == 10, "\(reactions)")
        } else {
            #expect(sent <= 5 * seconds && reacted <= 10 * seconds, "\(elapsed) s: \(messages) \(reactions)")
        }
        #expect(Set(messages) == ["message:send:success", "message:error:rate-limited"])
        #expect(Set(reactions) == ["reaction:send:success", "reaction:error:rate-limited"])
        // What got through is all the room stored: the refused messages are nowhere in its history.
        let history = try RawConnection.oneRequest(port, "GET", "/rooms/\(room)/events?page_size=1000")
        let stored = (history.json as? [[String: Any]] ?? (history.object["events"] as? [[String: Any]] ?? []))
            .filter { $0["type"] as? String == "message:text" }.count
        #expect(stored == sent + 1, "\(history.text.prefix(300))")

        // Operators see the refusals in parlor_rate_limited_total.
        #expect(try Self.rateLimited(port, "chat_per_address") == messages.count - sent)
        #expect(try Self.rateLimited(port, "reactions_per_address") == reactions.count - reacted)
        #expect(try RawConnection.oneRequest(port, "GET", "/healthz").status == 200)
        #expect(try !ServerProcess.checksMemory || server.residentBytes() - baseline < 32 * ServerProcess.mebibyte)
        #expect(try server.cpuSeconds() - cpuBefore < 5)
    }

    @Test func membersPerAddressInOneRoomMayBeCapped() throws {
        let capped = try ServerProcess(["--auth-rate", "0", "--max-members-per-address", "3", "--admin-token", Self.admin])
        let room = try #require(try RawConnection.oneRequest(capped.port, "POST", "/rooms", json: #"{"display_name":"R"}"#).object["id"] as? String)
        _ = try members(capped.port, room, 3, prefix: "sock")
        let grant = try RawConnection.oneRequest(capped.port, "POST", "/auth", json: #"{"name":"sock-extra"}"#)
        let extra = try TestWebSocket(port: capped.port, token: try #require(grant.object["jwt"] as? String))
        let refused = try extra.request("conversation:join", ["cid": room])
        #expect(errorCode(refused) == "room:error:full")
        #expect("\(refused)".contains("--max-members-per-address"), "\(refused)")
        #expect(try Self.rateLimited(capped.port, "members_per_address") == 1)
        // Another address still gets in, and the capped address may still join other rooms.
        #expect(try members(capped.port, room, 1, prefix: "other", from: "127.0.0.2").count == 1)
        let second = try #require(try RawConnection.oneRequest(capped.port, "POST", "/rooms", json: #"{"display_name":"S"}"#).object["id"] as? String)
        #expect(try extra.join(second)["member_id"] is String)

        // The default is no cap: a town hall behind one office NAT fills.
        let open = try ServerProcess(["--auth-rate", "0"])
        let hall = try #require(try RawConnection.oneRequest(open.port, "POST", "/rooms", json: #"{"display_name":"Hall"}"#).object["id"] as? String)
        #expect(try members(open.port, hall, 20, prefix: "staff").count == 20)
    }
}
