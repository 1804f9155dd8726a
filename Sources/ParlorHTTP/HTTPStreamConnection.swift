import ParlorCodec
import ParlorLoop

/// A connection once a streamed response's head is out (`HTTPStreamResponse`): writes what the producer sends,
/// framed as chunks or raw (HTTP/1.0), reads only to notice the client leaving, and cuts off a client whose unsent
/// bytes pass `maxStreamBacklogBytes` rather than hold them without bound.
final class HTTPStreamConnection: ConnectionHandler {
    /// Strong on purpose, as in `HTTPConnectionHandler`: closing clears `connection.handler`, which breaks the cycle.
    let connection: Connection
    private let context: HTTPServerContext
    private let response: HTTPStreamResponse
    private let chunked: Bool
    private let countedAddresses: ConnectionCapKeys
    private var end = HTTPStreamEnd.clientClosed
    /// Pull mode's idle check: drains seen, and the unsent bytes at the last check.
    private var drains = 0
    private var idleCheck: (drains: Int, pending: Int, timer: TimerID?) = (0, 0, nil)

    private static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    init(connection: Connection, context: HTTPServerContext, response: HTTPStreamResponse, chunked: Bool,
         countedAddresses: ConnectionCapKeys) {
        self.connection = connection
        self.context = context
        self.response = response
        self.chunked = chunked
        self.countedAddresses = countedAddresses
    }

    var writer: HTTPStreamWriter { HTTPStreamWriter(handle: connection.handle) }

    func send(_ bytes: [UInt8]) {
        connection.loop.assertInLoop()
        guard connection.isOpen else { return }
        if chunked {
            connection.queue(Array((String(bytes.count, radix: 16) + "\r\n").utf8))
            connection.queue(bytes)
            connection.queue(Self.crlf)
        } else {
            connection.queue(bytes)
        }
        connection.writeQueued()
        context.metrics?.streamBytes.add(bytes.count)
        if response.drained != nil { connection.notifyWhenOutputDrains(below: HTTPStreamResponse.drainedBelowBytes) }
        if connection.isOpen, connection.pendingOutputBytes > context.configuration.maxStreamBacklogBytes {
            // A listener that does not read would otherwise grow our memory without bound.
            connection.discardUnsentOutput()
            context.metrics?.streamSlowReadersClosed.add()
            end = .slowReader
            connection.close()
        }
    }

    /// Pull mode's first piece: asked for once the head is on its way.
    func start() {
        guard response.drained != nil else { return }
        connection.notifyWhenOutputDrains(below: HTTPStreamResponse.drainedBelowBytes)
        armIdleCheck()
    }

    private func armIdleCheck() {
        guard let limit = response.idleLimit, connection.isOpen else { return }
        idleCheck = (drains, connection.pendingOutputBytes, nil)
        idleCheck.timer = connection.loop.schedule(after: limit) { [weak self] in self?.checkIdle() }
    }

    private func checkIdle() {
        guard connection.isOpen, end != .finished else { return }
        let pending = connection.pendingOutputBytes
        if pending > 0, pending == idleCheck.pending, drains == idleCheck.drains {
            connection.discardUnsentOutput()
            context.metrics?.streamSlowReadersClosed.add()
            end = .slowReader
            connection.close()
            return
        }
        armIdleCheck()
    }

    func finish() {
        connection.loop.assertInLoop()
        guard connection.isOpen else { return }
        end = .finished
        if chunked { connection.queue(Self.lastChunk) }
        connection.closeAfterFlush()
    }

    func abort() {
        connection.loop.assertInLoop()
        guard connection.isOpen else { return }
        connection.closeAfterFlush()
    }

    /// Server shutdown: the body ends here (a listener hears a clean end of stream).
    func closeForShutdown() {
        finish()
        end = .shutdown
    }

    // MARK: ConnectionHandler

    /// Nothing the client sends after a streamed request is answered; it is read only so its close is noticed.
    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {}

    func connectionDidReachEnd(_ connection: Connection) {}

    func connectionOutputDidDrain(_ connection: Connection) {
        guard connection.isOpen, end != .finished else { return }
        drains += 1
        response.drained?(writer)
    }

    func connectionDidClose(_ connection: Connection) {
        connection.loop.assertInLoop()
        context.metrics?.httpConnections.subtract()
        context.connectionClosed(releasing: countedAddresses)
        if let timer = idleCheck.timer { connection.loop.cancelTimer(timer) }
        response.ended(HTTPStreamWriter(handle: connection.handle), end)
    }
}
