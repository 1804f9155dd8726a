import ParlorCodec
import ParlorLoop

/// One member of the audience scenario: a WebSocket that joins the stage room once and stays. Loop thread only.
final class AudienceClient {
    enum Role { case moderator, speaker, target, listener }
    enum State { case notStarted, connecting, handshaking, awaitingSession, joining, joined, closing, closed, failed }

    unowned let scenario: AudienceScenario
    let index: Int
    let token: String
    let role: Role
    var state = State.notStarted
    var pending: PendingConnection?
    var connection: Connection?
    var head: [UInt8] = []
    var decoder = WebSocketDecoder(role: .client, maxFrameSize: 1 << 22, maxMessageSize: 1 << 22)
    var nextTID = 1
    var joinSentAt: Int64 = 0
    var joinedAt: Int64 = 0
    /// Bytes read from the socket after the join reply: everything the server sent this member while it sat in the room.
    var bytesAfterJoin = 0
    /// Of those, the payloads of presence events (member:joined/left, room:audience, room:presence).
    var presenceBytesAfterJoin = 0
    /// The same two counted only while the fill ran, for the rate during the fill.
    var bytesInFill = 0
    var presenceBytesInFill = 0
    /// When this member's view of the room became summary presence (its join reply or `room:presence`), 0 while full.
    var summarySince: Int64 = 0
    /// What it received within the scenario's steady window (`AudienceScenario.steadyWindow`), if it was in the room
    /// in summary presence from the window's start: the audience's steady state, without full mode's first burst.
    var steadyBytes = 0
    var steadyPresenceBytes = 0

    init(index: Int, token: String, role: Role, scenario: AudienceScenario) {
        self.index = index
        self.token = token
        self.role = role
        self.scenario = scenario
    }
}

extension AudienceClient: ClientSocket {}

extension AudienceClient: OutboundConnectionHandler {
    func connectionDidConnect(_ connection: Connection) {
        pending = nil
        self.connection = connection
        scenario.connected(self)
    }

    func connectionDidFail(to address: SocketAddress, error: SystemError) { scenario.connectFailed(self, error) }
    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) { scenario.received(self, bytes) }
    func connectionDidReachEnd(_ connection: Connection) { scenario.reachedEnd(self) }
    func connectionDidClose(_ connection: Connection) { scenario.connectionClosed(self) }
}
