#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorClient
import ParlorLoop

// Before any thread exists: glibc fixes the arena count when the second arena is made (MallocArenas says why).
MallocArenas.apply(environment: ProcessInfo.processInfo.environment)

/// `parlor <command>`: the server, and the tools around it. Every command answers --help.
let usage = """
    Usage: parlor <command> [options]
           parlor --version | --help

    Commands:
      serve          run the server (parlor serve --help lists its options)
      token          mint a token offline with the server's secret
      rooms          list or create rooms on a running server
      join           join a room and print its events until interrupted, --until met, or the session ends
      watch          print a room's events from now on (--since for history), without joining
      events         print a room's history
      members        list a room's joined members (--hands: raised hands, in order)
      room           moderate a room: lock, unlock, mute-all (its creator or an admin)
      hand           raise or lower a hand in a stage room (yours, or as moderator a member's)
      role           set a member's role in a room: moderator, speaker, listener (its creator or an admin)
      say            send a chat message to a room
      record         record a room: start, stop, list its recordings, get a recording's file
      drop           cut a member's connections as a network failure would (test mode, admin)
      reset          forget every room, member and session (test mode, admin)
      migrate        apply the database migrations, or show their status
      openapi        print the OpenAPI 3.1 document of the HTTP API

    Talking to a server: --server URL (or PARLOR_SERVER; default http://localhost:8080); for an https:// server with a
    self-signed certificate, --ca-file PATH (or PARLOR_CA_FILE) trusts the PEM certificates in PATH.
    Waiting in scripts: parlor serve --ready-file PATH writes the URL to PATH once listening; join and watch wait
    from now (--since N|start for history) with --until 'TYPE KEY=VALUE …' (e.g. 'member:left reason=dropped
    user=bob'), --count, --any and --timeout; join --reconnect-attempts N (default 6) bounds its reconnects after a
    drop, --hold-reconnects or SIGUSR1/SIGUSR2 hold them (see parlor join --help).
    Output: tables for people, --json for scripts.
    Local development and tests: parlor serve --dev (never in production; see parlor serve --help).
    Exit codes: 0 success (join/watch --until: the event was seen), 1 the server or database failed or refused,
    or join's session ended for good (server gone, kicked, room closed, reset), 2 wrong usage (a bare parlor too),
    3 not found, 4 timed out (--until ... --timeout).
    """

/// The one version string (`parlor --version`).
let parlorVersion = "parlor 0.16.0"

func fail(_ message: String, code: Int32 = ExitCode.usage) -> Never {
    warn(message)
    exit(code)
}

let arguments = Array(CommandLine.arguments.dropFirst())
// A bare `parlor` must not start a server (and create ./data): it prints the help and exits 2 (usage).
guard let command = arguments.first else {
    print(usage)
    exit(ExitCode.usage)
}
let rest = Array(arguments.dropFirst())

let helps: [String: String] = [
    "token": LocalCommands.tokenHelp, "migrate": LocalCommands.migrateHelp, "rooms": ClientCommands.roomsHelp,
    "join": JoinCommand.help, "watch": WatchCommand.help, "events": ClientCommands.eventsHelp,
    "members": AdminCommands.membersHelp, "drop": AdminCommands.dropHelp, "reset": AdminCommands.resetHelp,
    "room": StageCommands.roomHelp, "say": StageCommands.sayHelp, "hand": HandCommands.handHelp, "role": HandCommands.roleHelp,
    "record": RecordCommand.help,
    "openapi": "Usage: parlor openapi\nPrints the OpenAPI document (docs/openapi.json is this output).",
]
if rest.contains("--help") || rest.contains("-h") {
    if command == "serve" {
        print(AppConfiguration.helpText() + Server.helpText, terminator: "")
        exit(ExitCode.success)
    }
    if let help = helps[command] {
        print(help)
        exit(ExitCode.success)
    }
}

do {
    let status: Int32
    switch command {
    case "serve": Server.run(options: rest)
    case "token": status = try LocalCommands.token(rest)
    case "migrate": status = try LocalCommands.migrate(rest)
    case "rooms": status = try await ClientCommands.rooms(rest)
    case "join": status = try await JoinCommand.run(rest)
    case "watch": status = try await WatchCommand.run(rest)
    case "events": status = try await ClientCommands.events(rest)
    case "members": status = try await AdminCommands.members(rest)
    case "drop": status = try await AdminCommands.drop(rest)
    case "reset": status = try await AdminCommands.reset(rest)
    case "room": status = try await StageCommands.room(rest)
    case "say": status = try await StageCommands.say(rest)
    case "hand": status = try await HandCommands.hand(rest)
    case "role": status = try await HandCommands.role(rest)
    case "record": status = try await RecordCommand.run(rest)
    case "--version", "version":
        print(parlorVersion)
        status = ExitCode.success
    case "openapi":
        print(openAPIDocumentText(), terminator: "")
        status = ExitCode.success
    case "--help", "-h", "help":
        print(usage)
        status = ExitCode.success
    default:
        fail("unknown command \(command); see parlor --help")
    }
    exit(status)
} catch let error as UsageError {
    fail("\(error.description); see parlor \(command) --help")
} catch let error as ParlorError {
    warn("\(error.code): \(error.detail)")
    exit(error.status == 404 || error.code.hasSuffix("not-found") ? ExitCode.notFound : ExitCode.failure)
} catch {
    warn("\(error)")
    exit(ExitCode.failure)
}
