import Foundation
import ParlorClient

/// `parlor watch`: holds a WebSocket that watches a room (conversation:watch) and prints its events as they happen,
/// without joining. After a reconnect it watches again and reads the history from the last id it printed, so every
/// event is printed once, in order.
enum WatchCommand {
    static let valued: Set<String> = WaitConditions.valued.union(["--server", "--as", "--token"])
    static let switches: Set<String> = WaitConditions.switches.union(["--json"])
    static let help = """
        Usage: parlor watch ROOM [--since N|start|now] [--as NAME | --token JWT] [--json]
                           [--until 'TYPE [KEY=VALUE …]' … [--count N] [--any] [--timeout SECONDS]] [--server URL]
        Prints ROOM's events as they happen, without joining, over one WebSocket (conversation:watch). The first line
        says the watch is in place and from which event: `-  watching  ROOM  after event N` (with --json:
        {"after":N,"cid":ROOM,"last_event_id":M,"type":"watching"}, M the room's newest event then); every event
        after N follows, each once, in order. By default it starts from now: nothing older is printed or matched
        (before issue 39 it replayed the whole history: --since start does that). Reconnects and carries on from the
        last event printed.
          --since N          print (and match) the history after event N first; start: the whole history; now: the
                             default
          --as NAME          the name to watch as (default parlor-watch; POST /auth)
          --token JWT        use this token instead (PARLOR_TOKEN; needed for --access code/closed servers)
          --json             one JSON object per line (the event as the server sent it); else ID TYPE MEMBER NAME REASON
        \(WaitConditions.help)
          --server URL       the server (PARLOR_SERVER; default http://localhost:8080)
        Exit codes: 0 interrupted or --until seen; 1 the session ended for good; 2 usage; 3 no such room; 4 --timeout.
        """

    private enum Step: Sendable {
        case event(RoomEvent)
        case rewatch
        case timedOut
        case finished(Int32, String?)
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: valued, switches: switches)
        guard options.positional.count == 1 else { throw UsageError(description: "watch takes ROOM") }
        let since = try WaitConditions.since(options)
        var conditions = try WaitConditions(options, me: nil)
        let room = options.positional[0]
        let json = options.has("--json")
        let stop = Interrupt.wait()
        let server = try ClientCommands.server(options)
        let token = options["--token"] ?? ProcessInfo.processInfo.environment["PARLOR_TOKEN"]
        let jwt = if let token { token } else { try await server.auth(name: options["--as"] ?? "parlor-watch").jwt }
        let session = try await server.connect(token: jwt)

        let (steps, step) = AsyncStream.makeStream(of: Step.self)
        let events = session.events  // subscribed before the watch: nothing it delivers is missed
        let tasks = [
            Task {
                await stop.value
                step.yield(.finished(ExitCode.success, nil))
            },
            Task {
                for await event in events where event.roomID == room { step.yield(.event(event)) }
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
            Task { [timeout = conditions.timeout] in
                guard let timeout else { return }
                try? await Task.sleep(for: .seconds(timeout))
                step.yield(.timedOut)
            },
        ]
        defer { for task in tasks { task.cancel() } }

        // The last id printed: events up to it are never printed again (a rewatch reads the history after it).
        var last: Int64 = -1

        /// Prints an event unless it was printed already; true when it completes the --until conditions.
        func show(_ event: RoomEvent) -> Bool {
            if let id = event.id {
                guard id > last else { return false }
                last = id
            }
            print(json ? event.raw.sortingKeys().encodedString() : line(event))
            return conditions.record(event)
        }

        /// Watches, then prints the history after `last`: live events queued meanwhile are printed after it, once.
        /// The first time, `last` is --since, or (from now) the newest id when the watch was in place.
        func watchAndCatchUp() async throws -> Bool {
            let reply = try await session.rawRequest(RequestType.conversationWatch.rawValue, body: ["cid": .string(room)])
            if last < 0 {
                let now = reply["last_event_id"]?.integerValue ?? 0
                last = since ?? now
                print(json ? JSONValue.object(["type": .string("watching"), "cid": .string(room), "after": JSONValue(last),
                                               "last_event_id": JSONValue(now)]).sortingKeys().encodedString()
                           : "-  watching  \(room)  after event \(last)")
            }
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
                let done = show(event)
                flushOutput()
                if done { return await finish(session, ExitCode.success) }
            case .rewatch:
                if try await watchAndCatchUp() { return await finish(session, ExitCode.success) }
            case .timedOut:
                warn("not seen within \(String(format: "%g", conditions.timeout ?? 0)) s: \(conditions.unmet)")
                return await finish(session, ExitCode.timedOut)
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
