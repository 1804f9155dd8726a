/// A request the rooms domain refuses, with the stable code clients match on.
public struct RoomError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: String
    public let detail: String

    public init(_ code: String, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }

    public static func notFound(_ cid: String) -> RoomError { RoomError("room:error:not-found", "no room with id \(cid)") }
    public static func closed(_ cid: String) -> RoomError { RoomError("room:error:closed", "room \(cid) is closed") }
    public static func full(_ cid: String, _ max: Int64) -> RoomError { RoomError("room:error:full", "room \(cid) already has its maximum of \(max) members") }
    public static func notJoined(_ cid: String) -> RoomError { RoomError("member:error:not-joined", "you have not joined room \(cid)") }
    public static func nameTaken(_ name: String) -> RoomError { RoomError("room:error:name-taken", "a room named \(name) already exists") }
    public static func ttlTooLong(_ max: Int64) -> RoomError {
        RoomError("request:error:invalid-field", "properties.ttl must be a whole number of seconds from 0 to \(max)")
    }
    public static let sessionNotFound = RoomError("session:error:not-found", "no session with that id for this user")
    public static let internalError = RoomError("server:error:internal", "the server failed to handle the request")
    public static let unavailable = RoomError("server:error:unavailable",
                                              "the server cannot store anything right now (disk full or failing); try again later")
    public static let shuttingDown = RoomError("server:error:shutting-down", "the server is shutting down")
}
