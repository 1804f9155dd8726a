import Foundation
import ParlorLoop
import ParlorMediaClient

/// Janus's HTTP API (janus.transport.http: POST /janus, /janus/SESSION, /janus/SESSION/HANDLE; events by long poll
/// on GET /janus/SESSION) over one blocking keep-alive connection: the unmeasured setup of `--janus` runs.
final class JanusAPI {
    private let port: Int
    private let basePath: String
    private var socket: BlockingSocket?
    private var nextTransaction = 1

    init(port: Int, basePath: String) {
        self.port = port
        self.basePath = basePath
    }

    func createSession() throws -> UInt64 { try Self.id(post(basePath, ["janus": "create"])["data"]) }

    func attachVideoRoom(session: UInt64) throws -> UInt64 {
        try Self.id(post("\(basePath)/\(session)", ["janus": "attach", "plugin": "janus.plugin.videoroom"])["data"])
    }

    /// A plugin message; returns Janus's immediate reply ("success" with plugindata for synchronous requests, "ack"
    /// for those answered later by an event).
    @discardableResult
    func message(session: UInt64, handle: UInt64, _ body: [String: Any], jsep: [String: Any]? = nil) throws -> [String: Any] {
        var request: [String: Any] = ["janus": "message", "body": body]
        if let jsep { request["jsep"] = jsep }
        let reply = try post("\(basePath)/\(session)/\(handle)", request)
        if let data = (reply["plugindata"] as? [String: Any])?["data"] as? [String: Any], let error = data["error"] {
            throw BenchError("janus \(body["request"] ?? "?"): \(error)")
        }
        return reply
    }

    /// The next plugin event for `handle` (long poll; keepalives and other events are skipped), within `seconds`; one
    /// reporting an error throws when `failing`.
    func event(session: UInt64, handle: UInt64, within seconds: Double = 20, failing: Bool = true) throws -> [String: Any] {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            let (status, body) = try connection().exchange(Array("GET \(basePath)/\(session)?maxev=1 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
            guard status == 200, let event = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw BenchError("janus GET \(session): \(status) \(String(decoding: body, as: UTF8.self).prefix(200))")
            }
            guard event["janus"] as? String == "event", (event["sender"] as? NSNumber)?.uint64Value == handle else { continue }
            if failing, let error = JanusRoom.error(event) { throw BenchError("janus event: \(error)") }
            return event
        }
        throw BenchError("janus: no event for handle \(handle) within \(Int(seconds)) s")
    }

    private func post(_ path: String, _ object: [String: Any]) throws -> [String: Any] {
        var object = object
        object["transaction"] = String(nextTransaction)
        nextTransaction += 1
        let payload = try JSONSerialization.data(withJSONObject: object)
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(payload.count)\r\n\r\n"
        let (status, body) = try connection().exchange(Array(head.utf8) + Array(payload))
        guard status == 200, let reply = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw BenchError("janus POST \(path): \(status) \(String(decoding: body, as: UTF8.self).prefix(200))")
        }
        if reply["janus"] as? String == "error" { throw BenchError("janus \(object["janus"] ?? "?"): \(reply["error"] ?? "?")") }
        return reply
    }

    private func connection() throws -> BlockingSocket {
        if let socket { return socket }
        let socket = try BlockingSocket(port: port)
        self.socket = socket
        return socket
    }

    private static func id(_ data: Any?) throws -> UInt64 {
        guard let id = ((data as? [String: Any])?["id"] as? NSNumber)?.uint64Value else { throw BenchError("janus: no id in \(data ?? "nil")") }
        return id
    }
}

/// One VideoRoom room: speakers join as publishers (offering a=setup:active, so we stay the DTLS client), listeners
/// as subscribers to every publisher (Janus offers, we answer receive-only). Each member has a session of its own
/// (the config sets session_timeout = 0, so idle sessions stay).
final class JanusRoom: @unchecked Sendable {  // `publishers` behind its lock; the rest immutable
    let port: Int
    let basePath: String
    let room: UInt64
    private let publishers = Locked<[UInt64]>([])

    init(url: URL) throws {
        guard let port = url.port else { throw BenchError("--janus: no port") }
        self.port = port
        basePath = url.path.isEmpty ? "/janus" : url.path
        room = UInt64.random(in: 100_000...999_999_999)
        let api = JanusAPI(port: port, basePath: basePath)
        let session = try api.createSession()
        let handle = try api.attachVideoRoom(session: session)
        try api.message(session: session, handle: handle, ["request": "create", "room": room, "publishers": 64, "audiocodec": "opus",
                                                           "description": "media bench"])
    }

    static func error(_ event: [String: Any]) -> Any? { ((event["plugindata"] as? [String: Any])?["data"] as? [String: Any])?["error"] }

    static func errorCode(_ event: [String: Any]) -> Int? {
        (((event["plugindata"] as? [String: Any])?["data"] as? [String: Any])?["error_code"] as? NSNumber)?.intValue
    }

    /// Signals one member and returns the server's side of the session (its candidate, ICE and fingerprint).
    func negotiate(_ peer: MediaPeer, index: Int, speaker: Bool, api: JanusAPI) throws -> MediaAnswer {
        let session = try api.createSession()
        let handle = try api.attachVideoRoom(session: session)
        if speaker {
            try api.message(session: session, handle: handle,
                            ["request": "joinandconfigure", "room": room, "ptype": "publisher", "display": "s\(index)", "audio": true, "video": false],
                            jsep: ["type": "offer", "sdp": peer.offer(slots: 0, sends: true, setup: "active")])
            let event = try api.event(session: session, handle: handle)
            guard let data = (event["plugindata"] as? [String: Any])?["data"] as? [String: Any], let id = (data["id"] as? NSNumber)?.uint64Value,
                  let sdp = (event["jsep"] as? [String: Any])?["sdp"] as? String else { throw BenchError("janus publisher: no id or answer in \(event)") }
            publishers.withLock { $0.append(id) }
            return try MediaAnswer(parsing: sdp)
        }
        let feeds = publishers.withLock { $0 }.map { ["feed": $0] }
        // A publisher is a feed only once Janus has its DTLS up, a moment after ours: "No such feed" is retried.
        var attempt = 0
        var event: [String: Any]
        repeat {
            try api.message(session: session, handle: handle, ["request": "join", "ptype": "subscriber", "room": room, "streams": feeds])
            event = try api.event(session: session, handle: handle, failing: false)
            attempt += 1
            if Self.errorCode(event) == 428, attempt < 50 { usleep(100_000) } else { break }
        } while true
        if let error = Self.error(event) { throw BenchError("janus subscriber join: \(error)") }
        guard let offer = (event["jsep"] as? [String: Any])?["sdp"] as? String else { throw BenchError("janus subscriber: no offer in \(event)") }
        let answer = try receiveOnlyAnswer(to: offer, ice: peer.ice, fingerprint: peer.certificate.fingerprint)
        try api.message(session: session, handle: handle, ["request": "start"], jsep: ["type": "answer", "sdp": answer])
        return try MediaAnswer(parsing: offer)
    }
}
