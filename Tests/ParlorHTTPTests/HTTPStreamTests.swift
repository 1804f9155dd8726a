#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorMetrics
import Testing

/// Streamed responses (`HTTPStreamResponse`) over real sockets on 127.0.0.1: chunks in order, HTTP/1.0 and HEAD,
/// a client that stops reading cut off at the bound, and a client that leaves heard by the producer; pull mode (a
/// download with a Content-Length, one piece per drain) whole, and cut off when its client takes nothing.
@Suite struct HTTPStreamTests {
    @Test func chunksArriveInOrderAndTheLastChunkEndsTheBody() throws {
        let server = try StreamServer()
        defer { server.stop() }
        let client = try BlockingClient(port: server.port)
        try client.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let writer = try server.waitForWriter()
        for part in ["one", "two", String(repeating: "x", count: 5000), "three"] { writer.send(Array(part.utf8)) }
        writer.finish()
        let received = try client.readToEnd()
        let (head, body) = try #require(split(received))
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(head.contains("Transfer-Encoding: chunked\r\n"))
        #expect(head.contains("Content-Type: audio/ogg\r\n"))
        #expect(!head.contains("Content-Length"))
        #expect(try dechunk(body) == "onetwo" + String(repeating: "x", count: 5000) + "three")
        #expect(String(decoding: body.suffix(5), as: UTF8.self) == "0\r\n\r\n")
        #expect(try server.waitForEnd() == .finished)
        #expect(server.metrics.streamBytes.load() == 6 + 5000 + 5)
    }

    @Test func http10GetsTheBodyUnchunkedEndedByTheClose() throws {
        let server = try StreamServer()
        defer { server.stop() }
        let client = try BlockingClient(port: server.port)
        try client.send("GET /stream HTTP/1.0\r\n\r\n")
        let writer = try server.waitForWriter()
        writer.send(Array("abc".utf8))
        writer.send(Array("def".utf8))
        writer.finish()
        let (head, body) = try #require(split(try client.readToEnd()))
        #expect(!head.contains("Transfer-Encoding"))
        #expect(head.contains("Connection: close\r\n"))
        #expect(String(decoding: body, as: UTF8.self) == "abcdef")
    }

    @Test func headGetsTheHeadAloneAndTheConnectionGoesOn() throws {
        let server = try StreamServer()
        defer { server.stop() }
        let client = try BlockingClient(port: server.port)
        try client.send("HEAD /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /plain HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let text = String(decoding: try client.readToEnd(), as: UTF8.self)
        let heads = text.components(separatedBy: "HTTP/1.1 200 OK\r\n")
        #expect(heads.count == 3)
        #expect(heads[1].contains("Transfer-Encoding: chunked\r\n"))
        #expect(text.hasSuffix("plain"))
        #expect(server.startedCount == 0)
    }

    @Test func aReaderThatStopsReadingIsCutOffAtTheBound() throws {
        let server = try StreamServer(backlog: 64 * 1024)
        defer { server.stop() }
        let client = try BlockingClient(port: server.port, receiveBuffer: 4096)
        try client.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let writer = try server.waitForWriter()
        // The client reads nothing more: the kernel's buffers fill, then our backlog, then it is cut off.
        let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
        let deadline = Date().addingTimeInterval(20)
        while server.end == nil, Date() < deadline {
            writer.send(chunk)
            usleep(1000)  // the producer's pace, not a wait for an event: a live mix sends every 250 ms
        }
        #expect(try server.waitForEnd() == .slowReader)
        #expect(server.metrics.streamSlowReadersClosed.load() == 1)
        #expect(server.metrics.httpConnections.load() == 0)
    }

    @Test func pullModeSendsOnePiecePerDrainWithTheContentLength() throws {
        let server = try StreamServer()
        defer { server.stop() }
        let client = try BlockingClient(port: server.port)
        try client.send("GET /pull/20 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let (head, body) = try #require(split(try client.readToEnd()))
        #expect(head.contains("Content-Length: \(20 * StreamServer.piece.count)\r\n"))
        #expect(!head.contains("Transfer-Encoding"))
        // Compared as a Bool: a failed == on megabytes would have the test library diff them for minutes.
        let whole = body == Array([[UInt8]](repeating: StreamServer.piece, count: 20).joined())
        #expect(whole, "\(body.count) bytes")
        #expect(try server.waitForEnd() == .finished)
    }

    @Test func pullModeCutsOffAClientThatTakesNothingForTheIdleLimit() throws {
        let server = try StreamServer()
        defer { server.stop() }
        let client = try BlockingClient(port: server.port, receiveBuffer: 4096)
        try client.send("GET /pull/100000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        // The client reads nothing: the drains stop once the kernel's buffers are full, then the idle limit cuts it.
        #expect(try server.waitForEnd() == .slowReader)
        #expect(server.metrics.streamBytes.load() < 16 * 1024 * 1024, "sent only what the buffers took")
        #expect(server.metrics.httpConnections.load() == 0)
    }

    @Test func aClientThatLeavesIsHeardByTheProducer() throws {
        let server = try StreamServer()
        defer { server.stop() }
        let client = try BlockingClient(port: server.port)
        try client.send("GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let writer = try server.waitForWriter()
        writer.send(Array("hello".utf8))
        client.close()
        #expect(try server.waitForEnd() == .clientClosed)
        writer.send(Array("after".utf8))  // dropped, not a crash
        #expect(server.metrics.httpConnections.load() == 0)
    }
}

/// An HTTPServer on port 0 whose GET /stream is a streamed response, recording its writer and how it ended.
private final class StreamServer: Sendable {
    let group: EventLoopGroup
    let server: HTTPServer
    let metrics = ServerMetrics()
    private let state = Locked<(writer: HTTPStreamWriter?, end: HTTPStreamEnd?, started: Int)>((nil, nil, 0))
    private let condition = NSCondition()

    init(backlog: Int = 256 * 1024) throws {
        group = try EventLoopGroup(loopCount: 1, namePrefix: "stream-test")
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.maxStreamBacklogBytes = backlog
        let box = Box()
        let router = Router { routes in
            routes.get("/stream") { _, _ in
                .stream(HTTPStreamResponse(headers: HTTPHeaders([("Content-Type", "audio/ogg")]),
                                           started: { box.owner?.started($0) }, ended: { box.owner?.ended($0, $1) }))
            }
            // Pull mode: `pieces` pieces, one per drain, and an idle limit of 300 ms.
            routes.get("/pull/{pieces}") { _, context in
                let pieces = Int(context.parameter("pieces")) ?? 1
                let sent = Locked(0)
                var response = HTTPStreamResponse(started: { box.owner?.started($0) }, ended: { box.owner?.ended($0, $1) })
                response.contentLength = pieces * Self.piece.count
                response.idleLimit = .milliseconds(300)
                response.drained = { writer in
                    let more = sent.withLock { count in
                        defer { count += 1 }
                        return count < pieces
                    }
                    if more { writer.send(Self.piece) } else { writer.finish() }
                }
                return .stream(response)
            }
            routes.get("/plain") { _, _ in .response(HTTPResponse(status: 200, body: Array("plain".utf8))) }
        }
        server = try HTTPServer(configuration: configuration, group: group, pipeline: HTTPPipeline(middleware: [], router: router),
                                logger: Logger(level: .error), metrics: metrics)
        box.owner = self
    }

    static let piece = (0..<64 * 1024).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    var port: Int { server.port }
    var startedCount: Int { state.withLock { $0.started } }
    var end: HTTPStreamEnd? { state.withLock { $0.end } }

    func started(_ writer: HTTPStreamWriter) { signal { $0.writer = writer; $0.started += 1 } }
    func ended(_ writer: HTTPStreamWriter, _ end: HTTPStreamEnd) { signal { $0.end = end } }

    private func signal(_ change: @escaping (inout (writer: HTTPStreamWriter?, end: HTTPStreamEnd?, started: Int)) -> Void) {
        condition.lock()
        state.withLock(change)
        condition.broadcast()
        condition.unlock()
    }

    private func wait<T>(_ value: () -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(10)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = value() { return found }
            guard condition.wait(until: deadline) else { throw StreamTestTimeout() }
        }
    }

    func waitForWriter() throws -> HTTPStreamWriter { try wait { state.withLock { $0.writer } } }
    func waitForEnd() throws -> HTTPStreamEnd { try wait { state.withLock { $0.end } } }

    func stop() {
        server.shutdown()
        group.shutdown()
    }

    /// The routes are built before the server they report to.
    final class Box: @unchecked Sendable {  // set once before the server accepts, read after
        weak var owner: StreamServer?
    }
}

struct StreamTestTimeout: Error {}

/// A plain blocking TCP client with a read timeout: what a player's socket does, nothing of ours.
private final class BlockingClient {
    private var fd: Int32

    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw StreamTestTimeout() }
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw StreamTestTimeout() }
    }

    /// Everything until the server closes; a read that times out fails the test.
    func readToEnd() throws -> [UInt8] {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return all }
            guard count > 0 else { throw StreamTestTimeout() }
            all += buffer[0..<count]
        }
    }

    func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}

private func split(_ bytes: [UInt8]) -> (head: String, body: [UInt8])? {
    let marker: [UInt8] = [13, 10, 13, 10]
    guard bytes.count >= 4, let index = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<$0 + 4]) == marker }) else { return nil }
    return (String(decoding: bytes[..<(index + 4)], as: UTF8.self), Array(bytes[(index + 4)...]))
}

/// RFC 9112 §7.1 chunked body to its bytes, up to the last chunk.
private func dechunk(_ body: [UInt8]) throws -> String {
    var out: [UInt8] = []
    var index = 0
    while true {
        guard let lineEnd = (index..<(body.count - 1)).first(where: { body[$0] == 13 && body[$0 + 1] == 10 }),
              let size = Int(String(decoding: body[index..<lineEnd], as: UTF8.self), radix: 16) else { throw StreamTestTimeout() }
        if size == 0 { return String(decoding: out, as: UTF8.self) }
        out += body[(lineEnd + 2)..<(lineEnd + 2 + size)]
        index = lineEnd + 2 + size + 2
    }
}
