/// Close status codes (RFC 6455 §7.4.1).
public struct WebSocketCloseCode: Sendable {
    public static let normal: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let protocolError: UInt16 = 1002
    public static let unsupportedData: UInt16 = 1003
    public static let noStatus: UInt16 = 1005
    public static let invalidPayload: UInt16 = 1007
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let internalError: UInt16 = 1011

    /// Whether `code` may appear in a close frame on the wire. 1005, 1006 and 1015 are reserved for
    /// local reporting, 1004 and 1012...2999 are not assigned for use, 3000...4999 belong to applications.
    public static func isValidOnWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }
}
