import Foundation
import ParlorClient

/// `parlor join`: stays joined and prints events; its exit code says how it ended, for scripts.
enum JoinCommand {
    static let valued = Set(["--server", "--as", "--token", "--until", "--count", "--timeout", "--since", "--reconnect-attempts"])
        .union(JoinAudio.valued)
    static let switches = Set(["--json", "--any", "--raise-hand", "--hold-reconnects"]).union(JoinAudio.switches)
    static let help = """
        Usage: parlor join ROOM (--as NAME | --token JWT) [--json] [--since N|start|now]
                          [--until 'TYPE [KEY=VALUE …]' … [--count N] [--any] [--timeout SECONDS]]
                          [--raise-hand] [--hold-reconnects] [--reconnect-attempts N] [--server URL]
                          [--play FILE.opus [--play-loop]] [--record FILE.ogg [--record-mode mixed|tracks]]
        Joins ROOM and stays joined, printing a "joined" line ({"type":"joined","cid","member_id","last_event_id",
        "role","members"}) and then every event of the room as a JSON line (its own member:joined first).
        --until waits for events after the join (from now): never an event the join itself caused (its own
        member:joined), never one from before it unless --since says so.
          --as NAME          authenticate as NAME (POST /auth; a name in use gets a separate identity: use --token
                             from parlor token to be that name's own identity)
          --token JWT        use this token instead (PARLOR_TOKEN; needed for --access closed servers)
          --json             also print the session's reconnects, resumes, holds and end as JSON lines on stdout
                             ({"type":"session:reconnecting"|"session:resumed"|"session:held"|"session:released"|
                             "session:ended",...}); without it they go to stderr as text
          --since N          print and match the room's history after event N too (start: all of it; now: the default)
        \(WaitConditions.help)
                             (in join's conditions member=me, by=me and from=me stand for this member)
          --raise-hand       raise this member's hand once joined (a stage room's listener), before the "joined" line
          --hold-reconnects  after a drop, hold the reconnect until SIGUSR2 (so the grace period can run out)
          --reconnect-attempts N  reconnect attempts after a drop before giving up (default 6, about 12 s)
          --server URL       the server (PARLOR_SERVER; default http://localhost:8080)
        \(JoinAudio.help)
        Signals: SIGINT/SIGTERM leave the room and exit 0. SIGUSR1 cuts the connection as a network failure would and
        holds the reconnect; SIGUSR2 lets it go: within the server's grace period the session resumes
        (session:resumed), past it the membership is gone (member:left reason dropped for the others; exit 1).
        Exit codes: 0 interrupted (Ctrl-C, SIGTERM: it leaves the room) or --until seen; 1 the session ended for
        good (server gone past the reconnect attempts, kicked, dropped past the grace period, room closed, server
        reset); 2 usage; 3 no such room; 4 --timeout passed.
        """

    private enum Step: Sendable {
        case event(RoomEvent)
        case state(ParlorSession.ConnectionState)
        case hold, release, interrupted, timedOut
    }

    enum Outcome: Sendable {
        case interrupted, seen, timedOut
        case ended(String)
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try CommandLineOptions(arguments, valued: valued, switches: switches)
        let token = options["--token"] ?? ProcessInfo.processInfo.environment["PARLOR_TOKEN"]
        guard options.positional.count == 1, options["--as"] != nil || token != nil else {
            throw UsageError(description: "join takes ROOM and --as NAME or --token JWT")
        }
        let since = try WaitConditions.since(options)
        _ = try WaitConditions(options, me: "")  // usage errors before connecting; parsed again with the member id
        var configuration = ParlorClientConfiguration()
        if let text = options["--reconnect-attempts"] {
            guard let attempts = Int(text), (0...100).contains(attempts) else {
                throw UsageError(description: "--reconnect-attempts must be a whole number from 0 to 100")
            }
            configuration.reconnect.maxAttempts = attempts
        }
        let media = try JoinAudio.prepare(options)
        // Before the "joined" line: a script may signal as soon as it reads it.
        let stop = Interrupt.wait()
        let holds = SignalEvents.stream(SIGUSR1)
        let releases = SignalEvents.stream(SIGUSR2)
        let room = options.positional[0]
        let json = options.has("--json")
        guard let url = URL(string: options.serverURL) else { throw UsageError(description: "--server must be a URL") }
        configuration.tls = try ClientCommands.tlsTrust(options)
        let server: ParlorServer
        do {
            server = try ParlorServer(url: url, configuration: configuration)
        } catch {
            throw UsageError(description: "--server: \(error.detail)")
        }
        let jwt: String
        if let name = options["--as"] {
            jwt = try await server.auth(name: name).jwt
        } else {
            jwt = token!
        }
        let session = try await server.connect(token: jwt)
        let events = session.events  // subscribed before the join: its own member:joined and all after it
        if options.has("--hold-reconnects") { await session.pauseReconnects() }
        let membership = try await session.join(room)
        if options.has("--raise-hand") {
            do {
                try await session.raiseHand(room)
            } catch {
                try? await session.leave(room)  // not left joined with the hand down when the script asked for it up
                await session.close()
                throw error
            }
        }
        var conditions = try WaitConditions(options, me: membership.memberID)
        var joined: [String: JSONValue] = [
            "type": .string("joined"), "cid": .string(room), "member_id": .string(membership.memberID),
            "last_event_id": JSONValue(membership.lastEventID),
            "members": .array(membership.members.map { .object(["member_id": .string($0.memberID), "name": .string($0.user.name)]) }),
        ]
        if let role = membership.role { joined["role"] = .string(role.rawValue) }
        print(JSONValue.object(JSONObject(sortingKeysOf: joined)).encodedString())

        // What --until may match: after the start point (the join, or --since), never this member's own join.
        let floor = since ?? membership.lastEventID
        func counts(_ event: RoomEvent) -> Bool {
            if event.type == .memberJoined && event.memberID == membership.memberID { return false }
            return event.id.map { $0 > floor } ?? true
        }
        var lastPrinted: Int64 = 0
        var outcome: Outcome?
        if let since {
            lastPrinted = try await printHistory(session, room, after: since, upTo: membership.lastEventID) { event in
                if outcome == nil, counts(event), conditions.record(event) { outcome = .seen }
            }
        }
        flushOutput()
        try await media?.start(session: session, room: room, membership: membership, json: json, stop: stop)

        let (steps, step) = AsyncStream.makeStream(of: Step.self)
        let tasks = [
            Task {
                await stop.value
                step.yield(.interrupted)
            },
            Task { for await event in events where event.roomID == room { step.yield(.event(event)) } },
            Task { for await state in session.connectionStates { step.yield(.state(state)) } },
            Task { for await _ in holds { step.yield(.hold) } },
            Task { for await _ in releases { step.yield(.release) } },
            Task { [timeout = conditions.timeout] in
                guard let timeout else { return }
                try? await Task.sleep(for: .seconds(timeout))
                step.yield(.timedOut)
            },
        ]
        defer { for task in tasks { task.cancel() } }
        // The history may already have met the conditions: then nothing more is awaited.
        if outcome == nil {
            steps: for await next in steps {
                switch next {
                case .event(let event):
                    if let id = event.id {
                        guard id > lastPrinted else { continue steps }
                        lastPrinted = id
                    }
                    print(event.raw.sortingKeys().encodedString())
                    flushOutput()
                    if event.type == .memberLeft, event.memberID == membership.memberID {
                        outcome = .ended("our membership ended: \(event.reason ?? "left")")
                    } else if counts(event), conditions.record(event) {
                        outcome = .seen
                    }
                case .state(let state):
                    outcome = report(state, room: room, json: json)
                case .hold:
                    await session.pauseReconnects()
                    await session.simulateNetworkDrop()
                    report(json, ["type": .string("session:held")], "connection cut; reconnects held until SIGUSR2")
                case .release:
                    await session.resumeReconnects()
                    report(json, ["type": .string("session:released")], "reconnects released")
                case .interrupted: outcome = .interrupted
                case .timedOut: outcome = .timedOut
                }
                if outcome != nil { break steps }
            }
        }
        switch outcome ?? .interrupted {
        case .interrupted, .seen:
            try? await session.leave(room)
            await session.close()
            return ExitCode.success
        case .timedOut:
            warn("not seen within \(String(format: "%g", conditions.timeout ?? 0)) s: \(conditions.unmet)")
            try? await session.leave(room)
            await session.close()
            return ExitCode.timedOut
        case .ended(let why):
            report(json, ["type": .string("session:ended"), "detail": .string(why)], "session ended: \(why)")
            await session.close()
            return ExitCode.failure
        }
    }

    /// Prints the history after `since` up to the join (`upTo`; later events come live), calling `match` on each;
    /// returns the last id printed.
    private static func printHistory(_ session: ParlorSession, _ room: String, after since: Int64, upTo last: Int64,
                                     _ match: (RoomEvent) -> Void) async throws -> Int64 {
        var cursor = since
        var printed = since
        while cursor < last {
            let page = try await session.events(in: room, since: cursor, pageSize: 1000)
            for event in page.events {
                guard let id = event.id, id <= last else { return printed }
                print(event.raw.sortingKeys().encodedString())
                printed = id
                match(event)
            }
            guard let next = page.nextSince else { break }
            cursor = next
        }
        return printed
    }

    /// A connection change as a line (see `report`); an outcome when it ends the session.
    private static func report(_ state: ParlorSession.ConnectionState, room: String, json: Bool) -> Outcome? {
        switch state {
        case .connected: return nil
        case .reconnecting(let attempt, let after):
            report(json, ["type": .string("session:reconnecting"), "attempt": JSONValue(attempt), "detail": .string(after.detail)],
                   "reconnecting (attempt \(attempt)): \(after.detail)")
            return nil
        case .resumed(let sessionID, let resumed, let lost):
            report(json, ["type": .string("session:resumed"), "session_id": .string(sessionID),
                          "resumed": .array(resumed.map { .string($0) }), "lost": .array(lost.map { .string($0) })],
                   "resumed as \(sessionID); resumed \(resumed), lost \(lost)")
            return lost.contains(room) ? .ended("the membership could not be resumed (grace period over)") : nil
        case .closed(let error):
            return .ended(error.map { "\($0.code): \($0.detail)" } ?? "closed")
        }
    }

    /// A session change: a JSON line on stdout with --json, else a line on stderr.
    static func report(_ json: Bool, _ fields: [String: JSONValue], _ text: String) {
        if json {
            print(JSONValue.object(JSONObject(sortingKeysOf: fields)).encodedString())
            flushOutput()
        } else {
            warn(text)
        }
    }
}
