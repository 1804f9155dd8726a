#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ParlorLoop

/// `EventLoop.connect`: outbound connections to real sockets on 127.0.0.1, against a `TCPServer` on another loop.
@Suite struct OutboundConnectTests {
    @Test func connectsToAListenerAndExchangesBytesBothWays() throws {
        let server = try EchoServer(greeting: "hello from the listener")
        defer { server.stop() }
        let loop = try Self.startedLoop("connect-exchange")
        defer { Self.stop(loop) }
        let client = RecordingHandler(sendOnConnect: "hello from the connector")
        loop.execute { loop.connect(to: server.address, handler: client) }

        let events = client.log.wait { RecordingHandler.received($0).count >= 23 + 24 }
        #expect(events.first == .connected(peer: "127.0.0.1:\(server.address.port)"))
        // The listener greets first, then echoes what the connector sent on connect.
        #expect(String(decoding: RecordingHandler.received(events), as: UTF8.self) == "hello from the listener" + "hello from the connector")

        // Closing from our side: the listener's connection reaches its end and closes.
        loop.execute { client.connection?.close() }
        let serverEvents = server.log.wait { $0.contains("closed") }
        #expect(serverEvents == ["accepted", "read hello from the connector", "reached end", "closed"])
        #expect(client.log.wait { $0.last == .closed }.last == .closed)
    }

    @Test func aRefusedConnectReportsECONNREFUSEDToTheHandler() throws {
        let port = try Self.portJustClosed()
        let loop = try Self.startedLoop("connect-refused")
        defer { Self.stop(loop) }
        let client = RecordingHandler()
        let address = try #require(SocketAddress(host: "127.0.0.1", port: port))
        loop.execute { loop.connect(to: address, handler: client) }

        let events = client.log.wait { !$0.isEmpty }
        #expect(events == [.failed(errno: ECONNREFUSED)])
        // The loop goes on: it still runs tasks, and the failed attempt left nothing registered behind.
        #expect(loop.submitAndWait { loop.openConnections().count } == 0)
    }

    @Test func anImmediateFailureReachesTheHandlerFromALaterLoopTurn() throws {
        let loop = try Self.startedLoop("connect-unreachable")
        defer { Self.stop(loop) }
        let client = RecordingHandler()
        // Linux refuses a TCP connect to the broadcast address inside connect(2) itself, with ENETUNREACH.
        let address = try #require(SocketAddress(host: "255.255.255.255", port: 9))
        let heardDuringConnect = loop.submitAndWait { () -> Bool in
            let pending = loop.connect(to: address, handler: client)
            return !client.log.snapshot.isEmpty || !pending.isPending
        }
        #expect(!heardDuringConnect)
        #expect(client.log.wait { !$0.isEmpty } == [.failed(errno: ENETUNREACH)])
    }

    @Test func manyConcurrentConnectsAllCompleteAndEcho() throws {
        let server = try EchoServer(greeting: "")
        defer { server.stop() }
        let loop = try Self.startedLoop("connect-many")
        defer { Self.stop(loop) }
        let clients = (0..<100).map { RecordingHandler(sendOnConnect: "client \($0);") }
        loop.execute { for client in clients { loop.connect(to: server.address, handler: client) } }

        for (index, client) in clients.enumerated() {
            let expected = "client \(index);"
            let events = client.log.wait { RecordingHandler.received($0).count >= expected.utf8.count }
            #expect(String(decoding: RecordingHandler.received(events), as: UTF8.self) == expected)
        }
        #expect(loop.submitAndWait { loop.openConnections().count } == clients.count)
        loop.execute { for client in clients { client.connection?.close() } }
        #expect(server.log.wait { $0.filter { $0 == "closed" }.count == clients.count }.filter { $0 == "closed" }.count == clients.count)
    }

    @Test func aCancelledConnectIsNeverHeardFrom() throws {
        let server = try EchoServer(greeting: "hello")
        defer { server.stop() }
        let loop = try Self.startedLoop("connect-cancel")
        defer { Self.stop(loop) }
        let cancelled = RecordingHandler(), completed = RecordingHandler()
        let stillPending = loop.submitAndWait { () -> Bool in
            let pending = loop.connect(to: server.address, handler: cancelled)
            pending.cancel()
            loop.connect(to: server.address, handler: completed)
            return pending.isPending
        }
        #expect(!stillPending)
        // The second attempt, started after the cancel, connects and reads: by then the first would have too.
        #expect(RecordingHandler.received(completed.log.wait { RecordingHandler.received($0).count >= 5 }) == Array("hello".utf8))
        #expect(loop.submitAndWait { cancelled.log.snapshot }.isEmpty)
        loop.execute { completed.connection?.close() }
    }

    // MARK: Support

    static func startedLoop(_ name: String) throws -> EventLoop {
        let loop = try EventLoop(name: name)
        loop.start()
        return loop
    }

    /// Closes what is still open on `loop` (a connection holds its loop), then stops it.
    static func stop(_ loop: EventLoop) {
        loop.submitAndWait { for connection in loop.openConnections() { connection.close() } }
        loop.stop()
        loop.waitUntilStopped()
    }

    /// A port on 127.0.0.1 that was bound a moment ago and is closed now: a connect to it is refused.
    static func portJustClosed() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw SystemError("bind") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Events a test thread waits for, appended from a loop thread.
final class EventLog<Event: Sendable>: @unchecked Sendable {  // `events` is only touched with `condition` locked
    private let condition = NSCondition()
    private var events: [Event] = []

    func append(_ event: Event) {
        condition.lock()
        events.append(event)
        condition.broadcast()
        condition.unlock()
    }

    var snapshot: [Event] {
        condition.lock()
        defer { condition.unlock() }
        return events
    }

    /// The events once `done` holds for them, or as they are after 10 s.
    func wait(until done: ([Event]) -> Bool) -> [Event] {
        let deadline = Date().addingTimeInterval(10)
        condition.lock()
        defer { condition.unlock() }
        while !done(events), condition.wait(until: deadline) {}
        return events
    }
}

/// The connector's side: records what it hears and writes `sendOnConnect` once connected.
final class RecordingHandler: OutboundConnectionHandler, @unchecked Sendable {  // used on its loop thread; tests read `log`
    enum Event: Equatable, Sendable { case connected(peer: String), failed(errno: Int32), read([UInt8]), reachedEnd, closed }

    let log = EventLog<Event>()
    let sendOnConnect: String
    /// Set while connected; loop thread only.
    var connection: Connection?

    init(sendOnConnect: String = "") { self.sendOnConnect = sendOnConnect }

    static func received(_ events: [Event]) -> [UInt8] {
        events.flatMap { event -> [UInt8] in
            if case .read(let bytes) = event { return bytes }
            return []
        }
    }

    func connectionDidConnect(_ connection: Connection) {
        self.connection = connection
        log.append(.connected(peer: connection.peer))
        connection.write(Array(sendOnConnect.utf8))
    }

    func connectionDidFail(to address: SocketAddress, error: SystemError) { log.append(.failed(errno: error.errno)) }
    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) { log.append(.read(Array(bytes))) }
    func connectionDidReachEnd(_ connection: Connection) { log.append(.reachedEnd) }

    func connectionDidClose(_ connection: Connection) {
        self.connection = nil
        log.append(.closed)
    }
}

/// A one-loop TCPServer on 127.0.0.1 port 0 that greets each connection and echoes what it reads.
final class EchoServer: Sendable {
    let group: EventLoopGroup
    let server: TCPServer
    let log = EventLog<String>()

    init(greeting: String) throws {
        group = try EventLoopGroup(loopCount: 1, namePrefix: "echo-server")
        let log = self.log
        server = try TCPServer(group: group, host: "127.0.0.1", port: 0) { connection in
            connection.handler = Peer(log: log)
            log.append("accepted")
            connection.write(Array(greeting.utf8))
        }
    }

    var address: SocketAddress { SocketAddress(host: "127.0.0.1", port: server.localAddress.port)! }

    func stop() {
        server.stopAccepting()
        OutboundConnectTests.stop(group.loops[0])
    }

    private final class Peer: ConnectionHandler {
        let log: EventLog<String>
        init(log: EventLog<String>) { self.log = log }

        func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
            log.append("read " + String(decoding: bytes, as: UTF8.self))
            connection.write(Array(bytes))
        }

        func connectionDidReachEnd(_ connection: Connection) { log.append("reached end") }
        func connectionDidClose(_ connection: Connection) { log.append("closed") }
    }
}
