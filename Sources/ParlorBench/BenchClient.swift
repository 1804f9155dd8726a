import ParlorCodec
import ParlorLoop

/// Who a client is, decided by the main thread before the workers start.
struct ClientAssignment {
    let index: Int
    let token: String
    let roomID: String
    /// Which of the generator's nodes (`--url`s) the client connects to.
    let node: Int
}

/// One simulated member: a WebSocket that joins a room, then leaves and joins again when the churn picks it.
/// It is its connection's handler and hands every event to its worker; loop thread only.
final class BenchClient {
    enum State { case notStarted, connecting, handshaking, awaitingSession, initialJoin, joined, leaving, rejoining, closing, closed, failed }

    unowned let worker: Worker
    let index: Int
    let token: String
    let roomID: String
    let node: Int
    var state = State.notStarted
    /// The connect under way, then the open connection; nil once the socket is gone.
    var pending: PendingConnection?
    var connection: Connection?
    var head: [UInt8] = []
    var decoder = WebSocketDecoder(role: .client, maxFrameSize: 1 << 20, maxMessageSize: 1 << 20)
    var opSentAt: Int64 = 0
    var nextTID = 1

    init(_ assignment: ClientAssignment, worker: Worker) {
        self.worker = worker
        index = assignment.index
        token = assignment.token
        roomID = assignment.roomID
        node = assignment.node
    }

}

extension BenchClient: ClientSocket {}

extension BenchClient: OutboundConnectionHandler {
    func connectionDidConnect(_ connection: Connection) {
        pending = nil
        self.connection = connection
        worker.connected(self)
    }

    func connectionDidFail(to address: SocketAddress, error: SystemError) { worker.connectFailed(self, error) }
    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) { worker.received(self, bytes) }
    func connectionDidReachEnd(_ connection: Connection) { worker.reachedEnd(self) }
    func connectionDidClose(_ connection: Connection) { worker.connectionClosed(self) }
}
