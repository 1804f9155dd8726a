import Foundation
import Testing
import ParlorApp

/// 200 clients in 20 rooms join and leave at random; afterwards every client's view of its room equals the
/// server's member list, and every client saw gap-free event ids while it was in the room.
@Suite struct RoomsChurnTests {
    @Test func churnLeavesNoGhostsAndNoGaps() throws {
        try withServer { app in
            let roomCount = 20, perRoom = 10
            let rooms = try (0..<roomCount).map { try createRoom(app, "churn \($0)") }
            let tokens = try (0..<(roomCount * perRoom)).map { try token(app, "churner\($0)") }
            let clients = WorkerShared(try tokens.map { try TestWebSocket(port: app.port, token: $0) })
            let failures = FailureLog()
            let deadline = Date().addingTimeInterval(2)

            DispatchQueue.concurrentPerform(iterations: roomCount) { roomIndex in
                let room = rooms[roomIndex]
                let group = Array(clients.value[(roomIndex * perRoom)..<((roomIndex + 1) * perRoom)])
                var joined = Array(repeating: false, count: perRoom)
                var generator = SystemRandomNumberGenerator()
                do {
                    var operations = 0
                    while Date() < deadline, operations < 400 {
                        let index = Int.random(in: 0..<perRoom, using: &generator)
                        _ = try group[index].call(joined[index] ? "conversation:leave" : "conversation:join", ["cid": room])
                        joined[index].toggle()
                        operations += 1
                    }
                    // Everyone still in the room drains what was sent to it, then compares with the server.
                    for (index, client) in group.enumerated() where joined[index] {
                        try client.sync()
                        let server = try client.call("conversation:members", ["cid": room, "page_size": 1000])
                        let serverView = Set(members(server).map { "\($0["member_id"] ?? "")|\(($0["user"] as? [String: Any])?["name"] ?? "")" })
                        let clientView = try Self.replay(client.log, room: room)
                        if clientView != serverView { failures.add("room \(roomIndex) client \(index): \(clientView) != \(serverView)") }
                    }
                    for (index, client) in group.enumerated() where !joined[index] {
                        _ = try Self.replay(client.log, room: room)  // checks gaps for clients that ended outside too
                        _ = index
                    }
                } catch {
                    failures.add("room \(roomIndex): \(error)")
                }
            }
            #expect(failures.entries.isEmpty, "\(failures.entries.prefix(5))")
        }
    }

    /// Applies a client's log the way the tutorial's ConversationModel does (add/remove by member id and name),
    /// checking that while it was in the room, event ids ran without gaps.
    static func replay(_ log: [[String: Any]], room: String) throws -> Set<String> {
        var view = Set<String>()
        var inRoom = false
        var expected = 0
        var ownMember = ""
        for message in log {
            let type = message["type"] as? String ?? ""
            let body = message["body"] as? [String: Any] ?? [:]
            if type == "conversation:join:success" {
                view = Set(members(body).map { "\($0["member_id"] ?? "")|\(($0["user"] as? [String: Any])?["name"] ?? "")" })
                expected = (body["last_event_id"] as? Int ?? 0) + 1
                ownMember = body["member_id"] as? String ?? ""
                inRoom = true
                continue
            }
            guard type.hasPrefix("member:"), message["cid"] as? String == room, let id = message["id"] as? Int else { continue }
            guard inRoom else { throw TestFailure("event \(id) arrived while the client was not in the room") }
            if id < expected { continue }  // already reflected in the join reply (its own member:joined)
            guard id == expected else { throw TestFailure("gap: expected event \(expected), got \(id)") }
            expected += 1
            let memberID = body["member_id"] as? String ?? ""
            let entry = "\(memberID)|\((body["user"] as? [String: Any])?["name"] ?? "")"
            if type == "member:joined" { view.insert(entry) } else { view.remove(entry) }
            if type == "member:left", memberID == ownMember { inRoom = false }
        }
        return view
    }
}

/// Hands clients to concurrent workers; each worker uses only its own slice.
struct WorkerShared<T>: @unchecked Sendable {  // disjoint slices per worker, so no client is shared between threads
    let value: T
    init(_ value: T) { self.value = value }
}

/// Collects failures from concurrent workers.
final class FailureLog: @unchecked Sendable {  // entries are guarded by `lock`
    private let lock = NSLock()
    private var stored: [String] = []
    func add(_ entry: String) { lock.lock(); stored.append(entry); lock.unlock() }
    var entries: [String] { lock.lock(); defer { lock.unlock() }; return stored }
}
