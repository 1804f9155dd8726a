import ParlorMedia
import ParlorRooms

extension AppConfiguration {
    /// Recordings (issue 38): where their files go, who may read them, how long they may run and are kept.
    static let recordingOptions: [ConfigurationOption] = [
        option("--recordings-dir", "PARLOR_RECORDINGS_DIR", "<data-dir>/recordings", "directory of the recordings' files: each recording in <dir>/<recording_id> (mix.opus, track-N.opus, manifest.json)") {
            guard !$1.isEmpty else { throw ConfigurationError(message: "--recordings-dir must not be empty") }
            $0.recordingsDirectory = $1
        },
        option("--recording-retention", "PARLOR_RECORDING_RETENTION", "0", "days a finished recording is kept before its row and files are deleted (checked hourly); 0 keeps them until deleted") {
            $0.rooms.recordingRetentionDays = try int($1, "--recording-retention", 0...36_500)
        },
        option("--max-recording-hours", "PARLOR_MAX_RECORDING_HOURS", "0", "hours after which a recording stops by itself (reason max-duration); 0: no limit") {
            let hours = try int($1, "--max-recording-hours", 0...8_760)
            $0.rooms.maxRecordingDuration = hours == 0 ? nil : .seconds(hours * 3600)
        },
        option("--recordings-access", "PARLOR_RECORDINGS_ACCESS", "moderators", "who may list and download a room's recordings besides admins: moderators (its creator and moderators) or members (also its current members)") {
            guard let access = RecordingsAccess(rawValue: $1.lowercased()) else {
                throw ConfigurationError(message: "--recordings-access must be moderators or members")
            }
            $0.rooms.recordingsAccess = access
        },
        option("--node-url", "PARLOR_NODE_URL", "http://<host>:<port>", "with PostgreSQL and several nodes: the http:// URL at which the other nodes reach this one, to proxy downloads of the recordings it holds (e.g. http://10.0.0.5:8080); default: the address it listens on, a wildcard as loopback") {
            guard let target = WebhookHTTPClient.Target($1), !target.usesTLS, target.path == "/" else {
                throw ConfigurationError(message: "--node-url must be an http:// URL without a path (e.g. http://10.0.0.5:8080), not \($1)")
            }
            $0.nodeURL = "http://\(target.authority)"
        },
    ]

    /// The recordings' root: --recordings-dir, else `<data-dir>/recordings`.
    public var resolvedRecordingsDirectory: String { recordingsDirectory ?? dataDirectory + "/recordings" }
}

/// What records rooms, for ParlorApplication to make once the forwarding unit and the rooms service exist (the
/// lead's adapter over ParlorMedia's tap and ParlorRecording's RoomRecorder; tests give one of their own).
public struct RecordingEngineFactory: Sendable {
    /// The engine for this server's forwarding unit; it reports each recording's end to the rooms service.
    public var make: @Sendable (MediaServer, RoomsService) -> any RecordingEngine
    /// At a start: closes the recordings a previous process left under the root directory and returns each one's
    /// manifest.json bytes by recording id.
    public var closeInterrupted: @Sendable (_ root: String) -> [String: [UInt8]]

    public init(make: @escaping @Sendable (MediaServer, RoomsService) -> any RecordingEngine,
                closeInterrupted: @escaping @Sendable (String) -> [String: [UInt8]] = { _ in [:] }) {
        self.make = make
        self.closeInterrupted = closeInterrupted
    }
}
