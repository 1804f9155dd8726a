import Foundation
import ParlorClient

/// A stage room's hands and roles from the command line: `parlor hand raise|lower` and `parlor role set`.
enum HandCommands {
    static let handHelp = """
        Usage: parlor hand raise ROOM --token JWT [--server URL] [--json]
               parlor hand lower ROOM --token JWT [--server URL] [--json]
               parlor hand lower ROOM MEMBER (--token JWT | --admin-token TOKEN | --dev) [--server URL] [--json]
        raise / lower without MEMBER: the hand of the member the token's user already has in ROOM (e.g. a running
        `parlor join ROOM --token JWT`; mint the token with parlor token --dev --name NAME). It attaches to that
        membership over a second connection, changes the hand and disconnects without leaving; a user who is not
        joined gets an error (use parlor join --raise-hand to join with the hand up). Everyone sees member:hand.
        lower with MEMBER: a moderator lowers MEMBER's hand over HTTP, as the room's creator (--token or
        PARLOR_TOKEN) or an admin (--admin-token, PARLOR_ADMIN_TOKEN, or --dev for parlor serve --dev).
        """
    static let roleHelp = """
        Usage: parlor role set ROOM MEMBER moderator|speaker|listener (--token JWT | --admin-token TOKEN | --dev)
                               [--server URL] [--json]
        Sets MEMBER's role in ROOM (everyone sees member:role): speaker puts a listener on a stage room's stage
        (lowering its hand), listener takes it off (its audio stops), moderator lets it run the room. As the room's
        creator (--token or PARLOR_TOKEN) or an admin (--admin-token, PARLOR_ADMIN_TOKEN, or --dev for parlor serve
        --dev). A stage that is full is media:error:too-many-senders (exit 1).
        """

    static func hand(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--token", "--admin-token"], switches: ["--dev", "--json"])
        let positional = options.positional
        guard positional.count == 2 || (positional.count == 3 && positional.first == "lower"), ["raise", "lower"].contains(positional[0]) else {
            throw UsageError(description: "hand takes raise ROOM, lower ROOM or lower ROOM MEMBER")
        }
        let room = positional[1]
        let server = try ClientCommands.server(options)
        if positional.count == 3 {
            let adminToken = options.has("--dev") || options["--admin-token"] != nil ? try AdminCommands.adminToken(options) : nil
            guard adminToken != nil || server.token != nil else { throw UsageError(description: "hand lower ROOM MEMBER needs --token, --admin-token or --dev") }
            try await server.lowerHand(memberID: positional[2], roomID: room, adminToken: adminToken)
            if options.has("--json") {
                print(JSONValue.object(["member_id": .string(positional[2]), "raised": .bool(false)]).sortingKeys().encodedString())
            }
            return ExitCode.success
        }
        guard let token = server.token else { throw UsageError(description: "hand \(positional[0]) ROOM needs --token JWT (the joined user's)") }
        let raise = positional[0] == "raise"
        let session = try await server.connect(token: token)
        do {
            guard let member = try await joinedMember(of: session.user, in: room, server) else {
                throw ParlorError(code: ErrorCode.memberNotJoined.rawValue,
                                  detail: "\(session.user.name) (\(session.user.id)) is not joined to \(room): join first, e.g. parlor join \(room) --token JWT --raise-hand")
            }
            _ = try await session.join(room)  // attaches to the same member (membership belongs to the user)
            if raise { try await session.raiseHand(room) } else { try await session.lowerHand(room) }
            await session.close()  // no leave: that would end the membership for every connection of the user
            if options.has("--json") {
                print(JSONValue.object(["member_id": .string(member), "raised": .bool(raise)]).sortingKeys().encodedString())
            }
        } catch {
            await session.close()
            throw error
        }
        return ExitCode.success
    }

    static func role(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--token", "--admin-token"], switches: ["--dev", "--json"])
        let positional = options.positional
        guard positional.count == 4, positional[0] == "set" else {
            throw UsageError(description: "role takes set ROOM MEMBER moderator|speaker|listener")
        }
        guard let role = MemberRole(rawValue: positional[3]) else {
            throw UsageError(description: "the role must be moderator, speaker or listener, not \(positional[3])")
        }
        let server = try ClientCommands.server(options)
        let adminToken = options.has("--dev") || options["--admin-token"] != nil ? try AdminCommands.adminToken(options) : nil
        guard adminToken != nil || server.token != nil else { throw UsageError(description: "role set needs --token, --admin-token or --dev") }
        try await server.setRole(role, memberID: positional[2], roomID: positional[1], adminToken: adminToken)
        if options.has("--json") {
            print(JSONValue.object(["member_id": .string(positional[2]), "role": .string(role.rawValue)]).sortingKeys().encodedString())
        }
        return ExitCode.success
    }

    /// The member id `user` holds in `room` now, from the members list (every page).
    private static func joinedMember(of user: ParlorUser, in room: String, _ server: ParlorServer) async throws -> String? {
        var cursor: String?
        repeat {
            let page = try await server.members(roomID: room, pageSize: 1000, cursor: cursor)
            if let member = page.members.first(where: { $0.user.id == user.id }) { return member.memberID }
            cursor = page.cursor
        } while cursor != nil
        return nil
    }
}
