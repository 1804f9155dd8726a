/// Everything needed to open (and later reopen) a session's WebSocket.
struct SessionConnector: Sendable {
    let endpoint: ServerEndpoint
    let token: String
    let configuration: ParlorClientConfiguration

    /// Connects, upgrades and reads session:success, on a thread of its own.
    func open() async throws(ParlorError) -> (WebSocketTransport.Opened, SessionHello) {
        let connector = self
        return try await Blocking.run("ParlorClient connect") { () throws(ParlorError) -> (WebSocketTransport.Opened, SessionHello) in
            let opened = try WebSocketTransport.open(connector.endpoint, token: connector.token, configuration: connector.configuration)
            do throws(ParlorError) {
                return (opened, try SessionHello(text: opened.hello))
            } catch {
                opened.transport.discard()
                throw error
            }
        }
    }
}

/// The server's first message: `{"type":"session:success","body":{"session_id","user":{"id","name"}}}`.
struct SessionHello: Sendable {
    let sessionID: String
    let user: ParlorUser
    /// `body.media`: how audio flows ("sfu" or "mesh") and the receive slots of an SFU peer connection.
    let mediaMode: String?
    let mediaSlots: Int?

    init(text: String) throws(ParlorError) {
        guard let message = JSONValue.parse(text) else { throw .invalidResponse("first message is not JSON: \(text)") }
        guard message["type"]?.stringValue == EventType.sessionSuccess.rawValue else {
            if message["type"]?.stringValue == ProtocolFrame.errorType { throw ParlorError(body: message["body"], status: nil) }
            throw .invalidResponse("expected session:success first, got \(text)")
        }
        let body = try JSONFields(message["body"] ?? .null, "session:success body")
        sessionID = try body.string("session_id")
        user = try ParlorUser(json: body["user"] ?? .null, "session:success body.user")
        mediaMode = body["media"]?["mode"]?.stringValue
        mediaSlots = body["media"]?["slots"]?.intValue
    }
}
