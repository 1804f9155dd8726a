import Foundation
import ParlorApp
import ParlorLoop
import Testing

/// What `SFUTests` drive: members with a WebSocket and an in-process peer connection, on one client loop.
extension SFUTests {
    /// A member with its WebSocket and its peer connection to the server.
    struct Participant {
        let socket: TestWebSocket
        let media: MediaTestClient
        let member: String
        let answer: [String: Any]
    }

    final class Harness {
        let app: ParlorApplication
        let loop: EventLoop
        private var clients: [MediaTestClient] = []

        init(_ app: ParlorApplication) throws {
            self.app = app
            loop = try EventLoop(name: "test-media-clients")
            loop.start()
        }

        deinit {
            for client in clients { client.close() }
            loop.stop()
            loop.waitUntilStopped()
        }

        /// Joins `room` as `name`, turns audio on if `speaker`, offers (a microphone when `sends`) and connects.
        func join(_ room: String, _ name: String, speaker: Bool, sends: Bool? = nil, slots: Int = 3,
                  socket: TestWebSocket? = nil) throws -> Participant {
            let socket = try socket ?? TestWebSocket(app, name: name)
            let member = try #require(try socket.join(room)["member_id"] as? String)
            if speaker { _ = try socket.call("audio:enable", ["cid": room]) }
            let media = try MediaTestClient(loop: loop, slots: slots, sends: sends ?? speaker)
            clients.append(media)
            let answer = try socket.call("media:offer", ["cid": room, "sdp": media.offer])
            try media.connect(answer: try #require(answer["sdp"] as? String))
            return Participant(socket: socket, media: media, member: member, answer: answer)
        }

        /// Returns once the media loop has done everything the rooms thread handed it so far (a reply the test
        /// holds was sent after its hand-off was queued).
        func mediaSettled() {
            _ = app.media?.onLoop { _ in true }
        }

        var mediaSessions: Int { app.media?.onLoop { $0.sessionCount } ?? -1 }
    }

    static func payload(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The next media:slots for `room` naming `member` in some slot (or none when nil).
    static func slots(_ socket: TestWebSocket, _ room: String, carrying member: String?) throws -> [[String: Any]] {
        let event = try socket.next { message in
            guard message["type"] as? String == "media:slots", message["cid"] as? String == room else { return false }
            let slots = (message["body"] as? [String: Any])?["slots"] as? [[String: Any]] ?? []
            if let member { return slots.contains { $0["member_id"] as? String == member } }
            return slots.allSatisfy { $0["member_id"] is NSNull }
        }
        return (event["body"] as? [String: Any])?["slots"] as? [[String: Any]] ?? []
    }
}
