import Foundation
import ParlorClient

/// `parlor record start|stop|list|get` (issue 38): a room's recordings over HTTP, for its creator, a stage room's
/// moderator or an admin.
enum RecordCommand {
    static let help = """
        Usage: parlor record start ROOM
               parlor record stop ROOM RECORDING
               parlor record list ROOM
               parlor record get RECORDING FILE [--output PATH]
               [--token JWT | --admin-token TOKEN | --dev] [--server URL] [--json]
        Records ROOM's audio on the server: start prints the new recording's id (everyone in the room sees the
        recording mark), stop ends it, list prints the room's recordings (id, state, duration, files), and get
        downloads one of a recording's files (mix.opus, track-N.opus or manifest.json) to PATH (default: FILE in the
        current directory; - for standard output). Needs the room creator's or a moderator's token (--token or
        PARLOR_TOKEN) or the admin token (--admin-token, PARLOR_ADMIN_TOKEN, or --dev for parlor serve --dev).
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--token", "--admin-token", "--output"],
                                             switches: ["--dev", "--json"])
        let positional = options.positional
        guard let action = positional.first else { throw UsageError(description: "record takes start, stop, list or get") }
        let server = try ClientCommands.server(options)
        let adminToken = options.has("--dev") || options["--admin-token"] != nil ? try AdminCommands.adminToken(options) : nil
        let json = options.has("--json")
        switch (action, positional.count) {
        case ("start", 2):
            let recording = try await server.startRecording(roomID: positional[1], adminToken: adminToken)
            print(json ? recording.sortingKeys().encodedString() : recording["id"]?.stringValue ?? "")
        case ("stop", 3):
            try await server.stopRecording(positional[2], roomID: positional[1], adminToken: adminToken)
            if json { print(#"{"stopped":true}"#) }
        case ("list", 2):
            let recordings = try await server.recordings(roomID: positional[1], adminToken: adminToken)
            if json {
                print(JSONValue.array(recordings).sortingKeys().encodedString())
            } else {
                for recording in recordings {
                    let duration = recording["duration_ms"]?.integerValue.map { String(format: "%.1f s", Double($0) / 1000) } ?? "-"
                    let files = recording["files"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ",") ?? "-"
                    print([recording["id"]?.stringValue ?? "-", recording["state"]?.stringValue ?? "-", duration,
                           recording["started_at"]?.stringValue ?? "-", files].joined(separator: "  "))
                }
            }
        case ("get", 3):
            let (recordingID, file) = (positional[1], positional[2])
            let bytes = try await server.recordingFile(recordingID, file: file, adminToken: adminToken)
            let output = options["--output"] ?? file
            if output == "-" {
                FileHandle.standardOutput.write(Data(bytes))
            } else {
                try Data(bytes).write(to: URL(filePath: output))
                if json {
                    print(JSONValue.object(["file": .string(output), "bytes": JSONValue(bytes.count)]).sortingKeys().encodedString())
                } else {
                    print("\(output) (\(bytes.count) bytes)")
                }
            }
        default:
            throw UsageError(description: "record takes start ROOM, stop ROOM RECORDING, list ROOM or get RECORDING FILE")
        }
        return ExitCode.success
    }
}
