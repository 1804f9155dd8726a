import ParlorProtocol

/// A request the rooms domain refuses, with the stable code clients match on (and HTTP routes answer with its status).
public struct RoomError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: ErrorCode
    public let detail: String

    public init(_ code: ErrorCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }

    public static func notFound(_ cid: String) -> RoomError { RoomError(.roomNotFound, "no room with id \(cid)") }
    public static func closed(_ cid: String) -> RoomError { RoomError(.roomClosed, "room \(cid) is closed") }
    public static func full(_ cid: String, _ max: Int64) -> RoomError { RoomError(.roomFull, "room \(cid) already has its maximum of \(max) members") }
    public static func notJoined(_ cid: String) -> RoomError { RoomError(.memberNotJoined, "you have not joined room \(cid)") }
    public static func nameTaken(_ name: String) -> RoomError { RoomError(.roomNameTaken, "a room named \(name) already exists") }
    public static func ttlTooLong(_ max: Int64) -> RoomError {
        RoomError(.requestInvalidField, "properties.ttl must be a whole number of seconds from 0 to \(max)")
    }
    public static let sessionNotFound = RoomError(.sessionNotFound, "no session with that id for this user")
    public static let internalError = RoomError(.serverInternal, "the server failed to handle the request")
    public static let unavailable = RoomError(.serverUnavailable,
                                              "the server cannot store anything right now (disk full or failing); try again later")
    public static let shuttingDown = RoomError(.serverShuttingDown, "the server is shutting down")
}
