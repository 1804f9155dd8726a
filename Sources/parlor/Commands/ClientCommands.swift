import Foundation
import ParlorClient
import Synchronization

/// Subcommands that talk to a running server: rooms, events (join: JoinCommand, watch: WatchCommand).
enum ClientCommands {
    static let roomsHelp = """
        Usage: parlor rooms list [--server URL] [--ca-file PATH] [--json]
               parlor rooms create NAME [--name SLUG] [--mode open|stage] [--e2ee] [--ttl SECONDS] [--max-members N]
                                   [--token JWT] [--server URL] [--ca-file PATH] [--json]
        Lists the open rooms, or creates one with display name NAME and prints its id. The room's properties:
          --mode stage       a stage room: its creator moderates, everyone else joins as a listener (needs --token:
                             the creator, e.g. parlor token --dev --name host); default open
          --e2ee             end-to-end encrypted (docs/e2ee.md); members must join with e2ee
          --ttl SECONDS      how long the room stays open once empty (server default 300)
          --max-members N    at most N members at once
          --name SLUG        its unique URL-friendly name (default: derived from the id)
          --token JWT        create as this user (PARLOR_TOKEN); without one the room has no creator
        \(caFileHelp)
        """
    static let eventsHelp = """
        Usage: parlor events ROOM [--since N] [--token JWT] [--server URL] [--ca-file PATH] [--json]
        Prints ROOM's history after event N (default 0). --token (or PARLOR_TOKEN) for servers whose rooms are visible
        to members only.
        \(caFileHelp)
        """
    /// For client commands' help; every command with `--server` takes `--ca-file` (CommandLineOptions).
    static let caFileHelp = """
        --ca-file PATH (or PARLOR_CA_FILE): for an https:// --server, trust the PEM certificates in PATH instead of the
        system's CA store (a self-signed server's certificate: tls-cert.pem in `parlor serve --tls-self-signed`'s data
        directory). The certificate is always verified; a TLS failure is client:error:tls, never a plain connection.
        """
    /// The CAs an https:// server must chain to: --ca-file, then PARLOR_CA_FILE, else the system's store.
    static func tlsTrust(_ options: CommandLineOptions) throws -> TLSTrust {
        guard let file = options["--ca-file"] ?? ProcessInfo.processInfo.environment["PARLOR_CA_FILE"], !file.isEmpty else {
            return TLSTrust()
        }
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw UsageError(description: "--ca-file (or PARLOR_CA_FILE): cannot read \(file)")
        }
        return TLSTrust(caFile: file)
    }

    static func server(_ options: CommandLineOptions) throws -> ParlorServer {
        guard let url = URL(string: options.serverURL) else { throw UsageError(description: "--server must be a URL") }
        var configuration = ParlorClientConfiguration()
        configuration.tls = try tlsTrust(options)
        do {
            return try ParlorServer(url: url, token: options["--token"] ?? ProcessInfo.processInfo.environment["PARLOR_TOKEN"],
                                    configuration: configuration)
        } catch {
            throw UsageError(description: "--server: \(error.detail)")
        }
    }

    static func rooms(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--name", "--ttl", "--max-members", "--token", "--mode"],
                                             switches: ["--json", "--e2ee"])
        let server = try server(options)
        switch options.positional.first {
        case "list":
            let rooms = try await server.rooms(pageSize: 1000)
            if options.has("--json") {
                print(JSONValue.array(rooms.map(json)).sortingKeys().encodedString())
            } else {
                TableOutput.print(["ID", "NAME", "DISPLAY NAME", "MEMBERS"], rooms.map { [$0.id, $0.name, $0.displayName, String($0.memberCount)] })
            }
            return ExitCode.success
        case "create":
            guard options.positional.count == 2 else { throw UsageError(description: "rooms create takes the display name") }
            let properties = try roomProperties(options)
            let room = try await server.createRoom(displayName: options.positional[1], name: options["--name"], properties: properties)
            if options.has("--json") { print(json(room).sortingKeys().encodedString()) } else { print(room.id) }
            return ExitCode.success
        default:
            throw UsageError(description: "rooms takes list or create")
        }
    }

    /// --mode, --e2ee, --ttl and --max-members, checked here so a typo is a usage error rather than a default.
    private static func roomProperties(_ options: CommandLineOptions) throws(UsageError) -> RoomProperties {
        func whole(_ flag: String) throws(UsageError) -> Int? {
            guard let text = options[flag] else { return nil }
            guard let value = Int(text), value > 0 else { throw UsageError(description: "\(flag) must be a positive whole number, not \(text)") }
            return value
        }
        var mode: RoomMode?
        if let text = options["--mode"] {
            guard let chosen = RoomMode(rawValue: text) else { throw UsageError(description: "--mode must be open or stage, not \(text)") }
            mode = chosen == .open ? nil : chosen
        }
        if mode == .stage, options["--token"] == nil, ProcessInfo.processInfo.environment["PARLOR_TOKEN"] == nil {
            throw UsageError(description: "--mode stage needs --token (a stage room's creator moderates it)")
        }
        return RoomProperties(ttl: try whole("--ttl"), maxMembers: try whole("--max-members"), mode: mode, e2ee: options.has("--e2ee"))
    }

    static func events(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: ["--server", "--since", "--token"], switches: ["--json"])
        guard options.positional.count == 1 else { throw UsageError(description: "events takes ROOM") }
        guard let start = Int64(options["--since"] ?? "0"), start >= 0 else { throw UsageError(description: "--since must be a whole number") }
        let server = try server(options)
        var since = start
        var all: [RoomEvent] = []
        while true {
            let page = try await server.events(roomID: options.positional[0], since: since, pageSize: 1000)
            all += page.events
            guard let next = page.nextSince else { break }
            since = next
        }
        if options.has("--json") {
            print(JSONValue.array(all.map(\.raw)).sortingKeys().encodedString())
        } else {
            TableOutput.print(["ID", "TYPE", "MEMBER", "NAME", "REASON"], all.map {
                [$0.id.map(String.init) ?? "-", $0.typeName, $0.memberID ?? "", $0.user?.name ?? "", $0.reason ?? ""]
            })
        }
        return ExitCode.success
    }

    static func json(_ room: Room) -> JSONValue {
        .object(["id": .string(room.id), "name": .string(room.name), "display_name": .string(room.displayName),
                 "member_count": JSONValue(room.memberCount), "mode": .string(room.mode.rawValue), "e2ee": .bool(room.e2ee),
                 "last_event_id": JSONValue(room.lastEventID)])
    }
}

/// Ctrl-C and SIGTERM for the commands that run until interrupted.
enum Interrupt {
    private static let flag = Atomic<Bool>(false)
    static var received: Bool { flag.load(ordering: .acquiring) }
    private static let waiters = Waiters()

    /// A task that finishes when SIGINT or SIGTERM arrives. Every call gets its own task; the signal sources are
    /// installed once (a second SIG_IGN + signal source pair for the same signal left neither firing on Linux).
    static func wait() -> Task<Void, Never> {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        waiters.add(continuation) {
            flag.store(true, ordering: .releasing)
            waiters.fire()
        }
        return Task {
            for await _ in stream { return }
        }
    }

    final class Waiters: Sendable {
        private struct State {
            var sources: [DispatchSourceSignal] = []
            var continuations: [AsyncStream<Void>.Continuation] = []
            var fired = false
        }
        private let state = Mutex(State())

        func add(_ continuation: AsyncStream<Void>.Continuation, installing handler: @escaping @Sendable () -> Void) {
            let alreadyFired = state.withLock { state in
                if state.sources.isEmpty {
                    for number in [SIGINT, SIGTERM] {
                        signal(number, SIG_IGN)
                        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                        source.setEventHandler(handler: handler)
                        source.resume()
                        state.sources.append(source)
                    }
                }
                if !state.fired { state.continuations.append(continuation) }
                return state.fired
            }
            if alreadyFired { continuation.finish() }
        }

        func fire() {
            let waiting = state.withLock { state in
                state.fired = true
                defer { state.continuations = [] }
                return state.continuations
            }
            for continuation in waiting {
                continuation.yield()
                continuation.finish()
            }
        }
    }
}
