import Foundation
import ParlorClient

/// Stage rooms from the command line: `parlor room lock|unlock|mute-all` (the room's creator or an admin, over
/// HTTP) and `parlor say` (join, send one chat message, leave).
enum StageCommands {
    static let roomHelp = """
        Usage: parlor room (lock | unlock | mute-all) ROOM [--token JWT | --admin-token TOKEN | --dev] [--server URL] [--json]
        Moderates ROOM: lock (new users' joins are refused; members may still resume), unlock, or mute every member
        sending audio (prints how many). Needs the room creator's token (--token or PARLOR_TOKEN) or the admin token
        (--admin-token, PARLOR_ADMIN_TOKEN, or --dev for parlor serve --dev).
        """
    static let sayHelp = """
        Usage: parlor say ROOM TEXT (--as NAME | --token JWT) [--server URL] [--json]
        Joins ROOM, sends TEXT as a chat message (message:text; 1 to 2000 characters), and leaves. Prints the
        message's event id.
        """

    static func room(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--token", "--admin-token"], switches: ["--dev", "--json"])
        guard options.positional.count == 2 else { throw UsageError(description: "room takes lock, unlock or mute-all, and ROOM") }
        let server = try ClientCommands.server(options)
        let adminToken = options.has("--dev") || options["--admin-token"] != nil ? try AdminCommands.adminToken(options) : nil
        let roomID = options.positional[1]
        switch options.positional[0] {
        case "lock", "unlock":
            try await server.setLocked(options.positional[0] == "lock", roomID: roomID, adminToken: adminToken)
            if options.has("--json") { print(#"{"locked":\#(options.positional[0] == "lock")}"#) }
        case "mute-all":
            let muted = try await server.muteAll(roomID: roomID, adminToken: adminToken)
            print(options.has("--json") ? #"{"muted":\#(muted)}"# : String(muted))
        default:
            throw UsageError(description: "room takes lock, unlock or mute-all")
        }
        return ExitCode.success
    }

    static func say(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--as", "--token"], switches: ["--json"])
        let token = options["--token"] ?? ProcessInfo.processInfo.environment["PARLOR_TOKEN"]
        guard options.positional.count == 2, options["--as"] != nil || token != nil else {
            throw UsageError(description: "say takes ROOM, TEXT and --as NAME or --token JWT")
        }
        let server = try ClientCommands.server(options)
        let jwt: String
        if let name = options["--as"] {
            jwt = try await server.auth(name: name).jwt
        } else {
            jwt = token ?? ""
        }
        let session = try await server.connect(token: jwt)
        let roomID = options.positional[0]
        do {
            let membership = try await session.join(roomID)
            let id = try await session.send(message: options.positional[1], in: roomID)
            try await session.leave(roomID)
            await session.close()
            print(options.has("--json")
                  ? JSONValue.object(["id": JSONValue(id), "cid": .string(roomID), "member_id": .string(membership.memberID)])
                      .sortingKeys().encodedString()
                  : String(id))
        } catch {
            await session.close()
            throw error
        }
        return ExitCode.success
    }
}
