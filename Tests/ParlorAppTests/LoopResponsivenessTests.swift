#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ParlorApp
import ParlorStore

/// No event loop waits on SQLite: with every reader connection or the writer held by other threads, the requests
/// that need them stay pending while the one loop keeps answering everything else, and complete once released.
/// (When routes called the database on the loop, the loop itself blocked and these answers never came.)
@Suite struct LoopResponsivenessTests {
    @Test func loopAnswersWhileEveryReaderIsHeld() throws {
        try withTemporaryDirectory { directory in
            try withServer({ $0.databasePath = directory + "/parlor.db"; $0.http.loopCount = 1; $0.readerCount = 2 }) { app in
                let room = try createRoom(app, "Held readers")
                let alice = try TestWebSocket(app, name: "alice")
                let held = try ConnectionHolder(count: 2) { body in _ = try app.database.read { _ in body() } }
                defer { held.release() }

                // A page size nobody asked for yet: the room list cache misses and the route needs a reader.
                let rooms = try RawConnection(port: app.port)
                try rooms.send("GET /rooms?page_size=7 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")

                let page = try http(app, "GET", "/")
                #expect(page.status == 200)
                #expect(page.header("Content-Type") == "text/html; charset=utf-8")
                #expect(try alice.request("session:ping")["type"] as? String == "session:ping:success")
                #expect(rooms.hasNoBytesYet(), "GET /rooms was answered without a reader")

                held.release()
                let listed = try rooms.readResponse()
                #expect(listed.status == 200)
                #expect(listed.array.map { $0["id"] as? String } == [room])
                #expect(listed.header("X-Request-Id") != nil)
            }
        }
    }

    @Test func authAndFirstUseTokensWaitForTheWriterWhileTheLoopAnswers() throws {
        try withTemporaryDirectory { directory in
            try withServer({ $0.databasePath = directory + "/parlor.db"; $0.http.loopCount = 1; $0.readerCount = 1 }) { app in
                let held = try ConnectionHolder(count: 1) { body in _ = try app.database.write { _ in body() } }
                defer { held.release() }

                let auth = try RawConnection(port: app.port)
                let body = #"{"name":"carol"}"#
                try auth.send("POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
                // Tokens for names the server has never seen: their users are created on first use.
                let daveToken = try app.tokens.issue(name: "dave").token
                let firstUse = try RawConnection(port: app.port)
                try firstUse.send("GET /rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(daveToken)\r\n\r\n")
                let erinToken = try app.tokens.issue(name: "erin").token
                let upgrade = try RawConnection(port: app.port)
                try upgrade.send("GET /ws?token=\(erinToken) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                 + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")

                #expect(try http(app, "GET", "/").status == 200)
                let read = try http(app, "GET", "/rooms?page_size=3")
                #expect(read.status == 200)
                #expect(read.array.isEmpty)
                #expect(auth.hasNoBytesYet(), "POST /auth was answered without the writer")
                #expect(firstUse.hasNoBytesYet(), "a first-use token was accepted without the writer")
                #expect(upgrade.hasNoBytesYet(), "a first-use token was upgraded without the writer")

                held.release()
                let granted = try auth.readResponse()
                #expect(granted.status == 200)
                #expect(granted.object["name"] as? String == "carol")
                #expect((granted.object["jwt"] as? String)?.isEmpty == false)
                let listed = try firstUse.readResponse()
                #expect(listed.status == 200)
                #expect(listed.array.isEmpty)
                let switched = try upgrade.readResponse()
                #expect(switched.status == 101)
                #expect(switched.header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
                #expect(try upgrade.waitForText("session:success"))
            }
        }
    }

    @Test func aFirstUseTokenOfAMissingUserIsRefusedBeforeAnyUpgrade() throws {
        try withServer { app in
            let forged = try app.tokens.issue(name: "frank", userID: "u_doesnotexist").token
            let socket = try RawConnection(port: app.port)
            try socket.send("GET /ws?token=\(forged) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            let refused = try socket.readResponse()
            #expect(refused.status == 401)
            #expect(refused.errorCode == "auth:error:invalid-token")
            #expect(refused.object["request_id"] as? String == refused.header("X-Request-Id"))
        }
    }
}

/// Checks out database connections on threads of its own and keeps them until `release`.
private final class ConnectionHolder: @unchecked Sendable {  // the semaphores are thread-safe; `released` is only touched by the test's thread
    private let held = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let count: Int
    private var released = false

    /// `checkOut` runs its argument while holding one connection; returns when all `count` are held.
    init(count: Int, _ checkOut: @escaping @Sendable (() -> Void) throws -> Void) throws {
        self.count = count
        for _ in 0..<count {
            Thread { [held, gate, finished] in
                try? checkOut {
                    held.signal()
                    gate.wait()
                }
                finished.signal()
            }.start()
        }
        for _ in 0..<count {
            guard held.wait(timeout: .now() + 5) == .success else { throw TestFailure("could not check out the connections") }
        }
    }

    /// Lets the connections go and waits until every holder has given its back. Idempotent.
    func release() {
        guard !released else { return }
        released = true
        for _ in 0..<count { gate.signal() }
        for _ in 0..<count { finished.wait() }
    }
}

private extension RawConnection {
    /// True when nothing has arrived: the request on this connection is still pending.
    func hasNoBytesYet() -> Bool {
        var byte: UInt8 = 0
        return buffer.isEmpty && recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Reads until `text` appears in the stream (server frames are unmasked, so a JSON message shows as it is).
    func waitForText(_ text: String) throws -> Bool {
        while buffer.firstRange(of: Array(text.utf8)) == nil {
            guard try fill() else { return false }
        }
        return true
    }
}
