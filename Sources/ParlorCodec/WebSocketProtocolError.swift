/// A violation by the peer; the connection must be closed with `closeCode`.
public struct WebSocketProtocolError: Error, Sendable, Equatable {
    public var closeCode: UInt16
    public var reason: String

    public init(closeCode: UInt16, reason: String) {
        self.closeCode = closeCode
        self.reason = reason
    }

    static func protocolError(_ reason: String) -> Self {
        .init(closeCode: WebSocketCloseCode.protocolError, reason: reason)
    }

    static func invalidPayload(_ reason: String) -> Self {
        .init(closeCode: WebSocketCloseCode.invalidPayload, reason: reason)
    }

    static func messageTooBig(_ reason: String) -> Self {
        .init(closeCode: WebSocketCloseCode.messageTooBig, reason: reason)
    }
}
