import ParlorProtocol

// The recording seam (issue 38): the rooms domain decides who records what and when, and keeps the record; an
// engine (ParlorApp's adapter over ParlorMedia's packet tap and ParlorRecording's RoomRecorder) writes the files.

/// What the engine is asked to record: the room's audio into `directory` (`<recordings-dir>/<recording_id>`).
public struct RecordingStart: Sendable {
    public var recordingID: String
    public var roomID: String
    public var directory: String
    /// --max-recording-hours: the engine stops by itself with reason max-duration after this long.
    public var maxDuration: Duration?
    /// The node recording it (several nodes on PostgreSQL; nil: one node), for the manifest's `node`.
    public var node: String?

    public init(recordingID: String, roomID: String, directory: String, maxDuration: Duration?, node: String? = nil) {
        self.recordingID = recordingID
        self.roomID = roomID
        self.directory = directory
        self.maxDuration = maxDuration
        self.node = node
    }
}

/// Writes a room's recording. Called on the rooms thread, after the commit that stored the recording's row.
public protocol RecordingEngine: AnyObject, Sendable {
    /// Throws: the start is refused (the row becomes failed and the room hears room:recording off, reason failed).
    func start(_ recording: RecordingStart) throws
    /// Its end comes back through `RoomsService.recordingEnded`.
    func stop(recordingID: String)
    /// The server is stopping: every recording this engine writes is finished now (whole files, a manifest saying
    /// `interrupted`) before this returns, and its end is not reported; the next start marks its row interrupted.
    /// Called again once the rooms thread has stopped, for a start it committed meanwhile.
    func stopAll()
}

/// A recording's state in its row: `recording` until the engine has finished its files.
public enum RecordingState: String, Sendable {
    case recording, complete, interrupted, failed
}

/// Who may list and download a room's recordings (--recordings-access): its creator, its moderators and admins,
/// or also its current members.
public enum RecordingsAccess: String, Sendable, CaseIterable {
    case moderators, members
}

/// Why a recording stopped without anyone asking, beside the engine's own reasons (disk-full, max-duration, failed).
enum RecordingEndReason {
    static let requested = "requested"
    static let roomEmpty = "room-empty"
    static let roomClosed = "room-closed"
    static let failed = "failed"
    static let interrupted = "interrupted"
}

/// A recording as stored (`recordings` table).
public struct RecordingRecord: Sendable, Equatable {
    public var id: String
    public var roomID: String
    /// The user who started it (nil: an admin over REST).
    public var startedBy: String?
    /// Unix ms.
    public var startedAt: Int64
    public var stoppedAt: Int64?
    public var state: RecordingState
    public var stopReason: String?
    public var durationMs: Int64?
    /// The node holding its files (nil: the only node).
    public var node: String?
    /// The engine's manifest.json once it has finished (or the interrupted one found at a restart).
    public var manifest: String?

    public init(id: String, roomID: String, startedBy: String?, startedAt: Int64, stoppedAt: Int64? = nil, state: RecordingState = .recording,
                stopReason: String? = nil, durationMs: Int64? = nil, node: String? = nil, manifest: String? = nil) {
        self.id = id
        self.roomID = roomID
        self.startedBy = startedBy
        self.startedAt = startedAt
        self.stoppedAt = stoppedAt
        self.state = state
        self.stopReason = stopReason
        self.durationMs = durationMs
        self.node = node
        self.manifest = manifest
    }

    /// The names its directory may hold, the only ones served: mix.opus, track-N.opus, manifest.json.
    public static func isFileName(_ name: String) -> Bool {
        if name == "mix.opus" || name == "manifest.json" { return true }
        guard name.hasPrefix("track-"), name.hasSuffix(".opus") else { return false }
        let number = name.dropFirst("track-".count).dropLast(".opus".count)
        return !number.isEmpty && number.count <= 6 && number.first != "0" && number.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The files its manifest lists (nil while it has none).
    public var files: [String]? {
        guard let manifest, case .object(let object)? = JSONValue.parse(manifest) else { return nil }
        var names: [String] = []
        if let mix = object["mix"]?.stringValue { names.append(mix) }
        if case .array(let tracks)? = object["tracks"] {
            for case .object(let track) in tracks { if let file = track["file"]?.stringValue { names.append(file) } }
        }
        return names.filter(Self.isFileName) + ["manifest.json"]
    }

    /// As REST lists it.
    public var json: JSONValue {
        var object: JSONObject = [
            "id": .string(id), "room_id": .string(roomID), "started_by": JSONValue(startedBy),
            "started_at": .string(Timestamp.iso8601(milliseconds: startedAt)),
            "stopped_at": stoppedAt.map { .string(Timestamp.iso8601(milliseconds: $0)) } ?? .null,
            "state": .string(state.rawValue), "stop_reason": JSONValue(stopReason),
            "duration_ms": durationMs.map { JSONValue($0) } ?? .null, "node": JSONValue(node),
        ]
        object["manifest"] = manifest.flatMap { JSONValue.parse($0) } ?? .null
        object["files"] = files.map { .array($0.map { .string($0) }) } ?? .null
        return .object(object)
    }
}

/// The recording a live room has running: memory, loaded from the row at start.
struct ActiveRecording {
    let id: String
    /// The member who started it (nil: an admin or the creator over REST).
    let byMemberID: String?
    let startedAt: Int64

    /// The join reply's `recording`.
    var json: JSONValue {
        ["recording_id": .string(id), "by": JSONValue(byMemberID), "started_at": .string(Timestamp.iso8601(milliseconds: startedAt))]
    }
}
