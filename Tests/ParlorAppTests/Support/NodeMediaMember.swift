import Foundation
import ParlorApp
import ParlorLoop
import Testing

/// A member joined through some node, and its in-process peer connection once it offered: the tests of several
/// nodes' audio (MediaHomeTests, MediaCascadeTests) drive one per person.
final class NodeMediaMember {
    var socket: TestWebSocket
    let id: String
    let name: String
    var media: MediaTestClient?
    var answer = ""

    init(socket: TestWebSocket, id: String, name: String) {
        self.socket = socket
        self.id = id
        self.name = name
    }

    /// Joins `room` through `socket`, with its audio on when `speaker`.
    convenience init(_ socket: TestWebSocket, _ name: String, in room: String, speaker: Bool) throws {
        let id = try #require(try socket.join(room)["member_id"] as? String)
        if speaker { _ = try socket.call("audio:enable", ["cid": room]) }
        self.init(socket: socket, id: id, name: name)
    }

    convenience init(_ app: ParlorApplication, _ name: String, in room: String, speaker: Bool) throws {
        try self.init(TestWebSocket(app, name: name), name, in: room, speaker: speaker)
    }

    /// Offers a new peer connection (a microphone when `sends`) and connects it with the answer.
    func offer(_ room: String, loop: EventLoop, sends: Bool, slots: Int = 3) throws {
        media?.close()
        let media = try MediaTestClient(loop: loop, slots: slots, sends: sends)
        self.media = media
        let reply = try socket.call("media:offer", ["cid": room, "sdp": media.offer])
        answer = try #require(reply["sdp"] as? String)
        try media.connect(answer: answer)
    }

    /// Whether the answer's candidate is `app`'s forwarding unit.
    func answered(by app: ParlorApplication) -> Bool {
        guard let port = app.media?.localAddress.port else { return false }
        return answer.contains(" \(port) typ host")
    }

    /// The payloads received so far that start with `prefix`.
    func payloads(from prefix: String) -> [[UInt8]] {
        (media?.received ?? []).map(\.payload).filter { $0.starts(with: Array(prefix.utf8)) }
    }
}

/// Runs `body` with a loop for the in-process media clients, stopped afterwards.
func withMediaClientLoop<T>(_ body: (EventLoop) throws -> T) throws -> T {
    let loop = try EventLoop(name: "test-media-clients")
    loop.start()
    defer {
        loop.stop()
        loop.waitUntilStopped()
    }
    return try body(loop)
}
