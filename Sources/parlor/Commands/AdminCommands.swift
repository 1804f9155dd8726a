import Foundation
import ParlorApp
import ParlorClient

/// `parlor members`, and the test-mode admin commands `parlor drop` and `parlor reset`.
enum AdminCommands {
    static let membersHelp = """
        Usage: parlor members ROOM [--hands | --role moderator|speaker|listener] [--token JWT] [--server URL] [--json]
        Lists ROOM's joined members (member id, user id, name, role), every page. --hands: only those whose hand is
        up, in the order they raised it (the first 1,000). --role: only those with that role, in join order (a big
        stage room's audience is --role listener). --token (or PARLOR_TOKEN) for servers whose rooms are visible to
        members only.
        """
    static let dropHelp = """
        Usage: parlor drop ROOM MEMBER (--admin-token TOKEN | --dev) [--server URL] [--json]
        Cuts MEMBER's connections without a close frame, as a network failure would: the client reconnects and resumes
        within the grace period, else it gets member:left reason dropped. Needs a --test-mode server and its admin token
        (--admin-token or PARLOR_ADMIN_TOKEN; --dev: the token of parlor serve --dev). Prints the connections cut.
        """
    static let resetHelp = """
        Usage: parlor reset (--admin-token TOKEN | --dev) [--server URL]
        Forgets every room, member and session of a --test-mode server; connected sessions are closed with 4004
        (server reset). --admin-token or PARLOR_ADMIN_TOKEN; --dev: the token of parlor serve --dev.
        """

    static func members(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--token", "--role"], switches: ["--json", "--hands"])
        guard options.positional.count == 1 else { throw UsageError(description: "members takes ROOM") }
        let role = try options["--role"].map { (name) throws(UsageError) in
            guard let role = MemberRole(rawValue: name) else {
                throw UsageError(description: "--role must be moderator, speaker or listener, not \(name)")
            }
            return role
        }
        if role != nil, options.has("--hands") { throw UsageError(description: "--hands and --role do not go together") }
        let server = try ClientCommands.server(options)
        let room = options.positional[0]
        var members: [Member] = []
        if options.has("--hands") {
            members = try await server.raisedHands(roomID: room, pageSize: 1000).members
        } else {
            var cursor: String?
            repeat {
                let page = try await server.members(roomID: room, pageSize: 1000, role: role, cursor: cursor)
                members += page.members
                cursor = page.cursor
            } while cursor != nil
        }
        if options.has("--json") {
            print(JSONValue.array(members.map {
                .object(["member_id": .string($0.memberID), "user_id": .string($0.user.id), "name": .string($0.user.name),
                         "role": $0.role.map { .string($0.rawValue) } ?? .null, "hand_raised": .bool($0.handRaised)])
            }).sortingKeys().encodedString())
        } else {
            TableOutput.print(["MEMBER", "USER", "NAME", "ROLE"], members.map {
                [$0.memberID, $0.user.id, $0.user.name, $0.role?.rawValue ?? "-"]
            })
        }
        return ExitCode.success
    }

    static func drop(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--admin-token"], switches: ["--dev", "--json"])
        guard options.positional.count == 2 else { throw UsageError(description: "drop takes ROOM and MEMBER") }
        let count = try await ClientCommands.server(options).dropMember(roomID: options.positional[0], memberID: options.positional[1],
                                                                           adminToken: try adminToken(options))
        print(options.has("--json") ? #"{"connections":\#(count)}"# : String(count))
        return ExitCode.success
    }

    static func reset(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--admin-token"], switches: ["--dev"])
        guard options.positional.isEmpty else { throw UsageError(description: "reset takes no arguments") }
        try await ClientCommands.server(options).reset(adminToken: try adminToken(options))
        return ExitCode.success
    }

    /// --dev, else --admin-token, else PARLOR_ADMIN_TOKEN; checked by the server's own rule.
    static func adminToken(_ options: CommandLineOptions) throws(UsageError) -> String {
        if options.has("--dev") { return AppConfiguration.devAdminToken }
        guard let token = options["--admin-token"] ?? ProcessInfo.processInfo.environment["PARLOR_ADMIN_TOKEN"] else {
            throw UsageError(description: "needs --admin-token TOKEN, PARLOR_ADMIN_TOKEN or --dev")
        }
        do {
            try AppConfiguration.validateSecret(token, "--admin-token")
        } catch {
            throw UsageError(description: error.message)
        }
        return token
    }
}
