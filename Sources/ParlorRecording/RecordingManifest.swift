import Foundation

/// Why a recording ended (the manifest's `stop_reason`, the event's `reason`).
public enum RecordingStopReason: String, Sendable, Codable {
    case requested
    case diskFull = "disk-full"
    case maxDuration = "max-duration"
    case failed
    /// The server stopped without finishing it (`kill -9`, power cut); found at the next start.
    case interrupted
}

/// What a `RoomRecorder` records and where.
public struct RecordingSettings: Sendable {
    public var recordingID: String
    public var roomID: String
    /// `<recordings-dir>/<recording_id>`; created by the recorder.
    public var directory: String
    /// The recording stops itself with `.maxDuration` when it has lasted this long.
    public var maxDuration: Duration?
    /// The node holding the files, written into the manifest.
    public var node: String?

    public init(recordingID: String, roomID: String, directory: String, maxDuration: Duration? = nil, node: String? = nil) {
        self.recordingID = recordingID
        self.roomID = roomID
        self.directory = directory
        self.maxDuration = maxDuration
        self.node = node
    }
}

/// `manifest.json` in a recording's directory: written when it starts (`state` "recording"), again when a speaker's
/// track starts, and when it ends ("complete"), or at the next start after a crash ("interrupted").
public struct RecordingManifest: Sendable, Codable, Equatable {
    public struct Track: Sendable, Codable, Equatable {
        public var member: String
        /// `track-N.opus`, N from 1 in the order of each member's first packet.
        public var file: String
        /// Where the member's first packet falls on the recording's time line (the file itself starts at 0).
        public var offsetMs: Int64
        public var durationMs: Int64

        public init(member: String, file: String, offsetMs: Int64, durationMs: Int64) {
            self.member = member
            self.file = file
            self.offsetMs = offsetMs
            self.durationMs = durationMs
        }

        enum CodingKeys: String, CodingKey {
            case member, file
            case offsetMs = "offset_ms"
            case durationMs = "duration_ms"
        }
    }

    public static let fileName = "manifest.json"
    public static let mixFile = "mix.opus"

    public var recordingID: String
    public var roomID: String
    public var node: String?
    /// Unix ms.
    public var startedAt: Int64
    public var durationMs: Int64
    /// "recording" while written, then "complete" or "interrupted".
    public var state: String
    public var stopReason: RecordingStopReason?
    public var mix: String
    public var tracks: [Track]

    public init(recordingID: String, roomID: String, node: String?, startedAt: Int64, durationMs: Int64 = 0, state: String = "recording",
                stopReason: RecordingStopReason? = nil, mix: String = RecordingManifest.mixFile, tracks: [Track] = []) {
        self.recordingID = recordingID
        self.roomID = roomID
        self.node = node
        self.startedAt = startedAt
        self.durationMs = durationMs
        self.state = state
        self.stopReason = stopReason
        self.mix = mix
        self.tracks = tracks
    }

    enum CodingKeys: String, CodingKey {
        case recordingID = "recording_id"
        case roomID = "room_id"
        case node
        case startedAt = "started_at"
        case durationMs = "duration_ms"
        case state
        case stopReason = "stop_reason"
        case mix, tracks
    }

    /// The manifest's JSON, as written to `manifest.json`.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Encoding strings, numbers and optionals cannot fail.
        return Array((try? encoder.encode(self)) ?? Data())
    }

    public init(decoding bytes: [UInt8]) throws {
        self = try JSONDecoder().decode(RecordingManifest.self, from: Data(bytes))
    }
}
