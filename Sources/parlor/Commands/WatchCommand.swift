import Foundation
import ParlorClient

/// `parlor watch`: holds a WebSocket that watches a room (conversation:watch) and prints its events as they happen,
/// without joining. After a reconnect it watches again and reads the history from the last id it printed, so every
/// event is printed once, in order.
enum WatchCommand {
    static let valued: Set<String> = ["--server", "--since", "--as", "--token", "--until", "--timeout"]
    static let switches: Set<String> = ["--json"]
    static let help = """
        Usage: parlor watch ROOM [--since N] [--as NAME | --token JWT] [--json] [--until EVENT [--timeout SECONDS]]
                           [--server URL]
        Prints ROOM's events as they happen, without joining: the history after event N first, then each event as the
        server sends it, over one WebSocket (conversation:watch). Reconnects and carries on from the last event printed.
          --since N          start after event N (default 0: the whole history first)
          --as NAME          the name to watch as (default parlor-watch; POST /auth)
          --token JWT        use this token instead (PARLOR_TOKEN; needed for --access code/closed servers)
          --json             one JSON object per line (the event as the server sent it); else ID TYPE MEMBER NAME REASON
          --until EVENT      exit 0 once an event of type EVENT (e.g. member:left) is seen
          --timeout SECONDS  with --until: exit 4 if it has not come by then
          --server URL       the server (PARLOR_SERVER; default http://localhost:8080)
        Exit codes: 0 interrupted or --until seen; 1 the session ended for good; 2 usage; 3 no such room; 4 --timeout.
        """

    private enum Step: Sendable {
        case event(RoomEvent)
        case rewatch
        case finished(Int32, String?)
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: valued, switches: switches)
        guard options.positional.count == 1 else { throw UsageError(description: "watch takes ROOM") }
        guard var last = Int64(options["--since"] ?? "0"), last >= 0 else { throw UsageError(description: "--since must be a whole number") }
        let room = options.positional[0]
        let until = options["--until"]
        let timeout = try UntilOptions.timeout(options)
        let json = options.has("--json")
        let stop = Interrupt.wait()
        let server = try ClientCommands.server(options)
        let token = options["--token"] ?? ProcessInfo.processInfo.environment["PARLOR_TOKEN"]
        let jwt = if let token { token } else { try await server.auth(name: options["--as"] ?? "parlor-watch").jwt }
        let session = try await server.connect(token: jwt)

        let (steps, step) = AsyncStream.makeStream(of: Step.self)
        let tasks = [
            Task {
                await stop.value
                step.yield(.finished(ExitCode.success, nil))
            },
            Task {
                for await event in session.events where event.roomID == room { step.yield(.event(event)) }
            },
            Task {
                for await state in session.connectionStates {
                    switch state {
                    case .resumed: step.yield(.rewatch)  // a watch does not survive the connection
                    case .closed(let error): step.yield(.finished(ExitCode.failure, error.map { "\($0.code): \($0.detail)" } ?? "closed"))
                    case .connected, .reconnecting: continue
                    }
                }
            },
            Task {
                guard until != nil, let timeout else { return }
                try? await Task.sleep(for: .seconds(timeout))
                step.yield(.finished(ExitCode.timedOut, "no \(until ?? "event") within \(timeout) s"))
            },
        ]
        defer { for task in tasks { task.cancel() } }

        /// Prints an event unless it was printed already; true when it is the one --until waits for.
        func show(_ event: RoomEvent) -> Bool {
            if let id = event.id {
                guard id > last else { return false }
                last = id
            }
            if json {
                print(event.raw.sortingKeys().encodedString())
            } else {
                print(line(event))
            }
            return event.typeName == until
        }

        /// Watches, then prints the history after `last`: live events queued meanwhile are printed after it, once.
        func watchAndCatchUp() async throws -> Bool {
            _ = try await session.rawRequest(RequestType.conversationWatch.rawValue, body: ["cid": .string(room)])
            while true {
                let page = try await session.events(in: room, since: last, pageSize: 1000)
                for event in page.events where show(event) { return true }
                guard page.nextSince != nil else { break }
            }
            flushOutput()
            return false
        }

        if try await watchAndCatchUp() { return await finish(session, ExitCode.success) }
        for await next in steps {
            switch next {
            case .event(let event):
                let seen = show(event)
                flushOutput()
                if seen { return await finish(session, ExitCode.success) }
            case .rewatch:
                if try await watchAndCatchUp() { return await finish(session, ExitCode.success) }
            case .finished(let status, let why):
                if let why { warn(why) }
                return await finish(session, status)
            }
        }
        return await finish(session, ExitCode.success)
    }

    /// One event as ID TYPE MEMBER NAME REASON; a big stage room's presence events say what they summarise instead.
    static func line(_ event: RoomEvent) -> String {
        let fields: [String]
        if let presence = event.presence {
            fields = [presence.mode.rawValue, "\(presence.count) members", "up to event \(presence.lastEventID)"]
        } else if let audience = event.audience {
            let joined = audience.joined.map { "+" + $0.user.name } + (audience.joinedMore > 0 ? ["+\(audience.joinedMore) more"] : [])
            let left = audience.left.isEmpty && audience.leftMore == 0 ? [] : ["-\(audience.left.count + audience.leftMore) left"]
            fields = ["\(audience.count) in the audience"] + joined + left + ["up to event \(audience.lastEventID)"]
        } else {
            fields = [event.memberID ?? "", event.user?.name ?? "", event.reason ?? ""]
        }
        return ([event.id.map(String.init) ?? "-", event.typeName] + fields).joined(separator: "  ").trimmingCharacters(in: .whitespaces)
    }

    private static func finish(_ session: ParlorSession, _ status: Int32) async -> Int32 {
        flushOutput()
        await session.close()
        return status
    }
}
