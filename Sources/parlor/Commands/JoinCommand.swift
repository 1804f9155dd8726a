import Foundation
import ParlorClient

/// `parlor join`: stays joined and prints events; its exit code says how it ended, for scripts.
enum JoinCommand {
    static let valued = Set(["--server", "--as", "--token", "--until", "--timeout", "--reconnect-attempts"]).union(JoinAudio.valued)
    static let switches = Set(["--json"]).union(JoinAudio.switches)
    static let help = """
        Usage: parlor join ROOM (--as NAME | --token JWT) [--json] [--until EVENT [--timeout SECONDS]]
                          [--reconnect-attempts N] [--server URL]
                          [--play FILE.opus [--play-loop]] [--record FILE.ogg [--record-mode mixed|tracks]]
        Joins ROOM and stays joined, printing a "joined" line and then every event of the room as a JSON line.
          --as NAME          authenticate as NAME (POST /auth)
          --token JWT        use this token instead (PARLOR_TOKEN; needed for --access closed servers)
          --json             also print the session's reconnects, resumes and end as JSON lines on stdout
                             ({"type":"session:reconnecting"|"session:resumed"|"session:ended",...}); without it
                             they go to stderr as text
          --until EVENT      exit 0 once an event of type EVENT (e.g. member:joined) is seen
          --timeout SECONDS  with --until: exit 4 if it has not come by then
          --reconnect-attempts N  reconnect attempts after a drop before giving up (default 6, about 12 s)
          --server URL       the server (PARLOR_SERVER; default http://localhost:8080)
        \(JoinAudio.help)
        Exit codes: 0 interrupted (Ctrl-C, SIGTERM: it leaves the room) or --until seen; 1 the session ended for
        good (server gone past the reconnect attempts, kicked, dropped past the grace period, room closed, server
        reset); 2 usage; 3 no such room; 4 --timeout passed.
        """

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
        let until = options["--until"]
        let timeout = try UntilOptions.timeout(options)
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
        let room = options.positional[0]
        let json = options.has("--json")
        guard let url = URL(string: options.serverURL) else { throw UsageError(description: "--server must be a URL") }
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
        let membership = try await session.join(room)
        print(JSONValue.object([
            "type": .string("joined"), "cid": .string(room), "member_id": .string(membership.memberID),
            "members": .array(membership.members.map { .object(["member_id": .string($0.memberID), "name": .string($0.user.name)]) }),
        ]).sortingKeys().encodedString())
        flushOutput()
        try await media?.start(session: session, room: room, membership: membership, json: json, stop: stop)

        let (outcomes, outcome) = AsyncStream.makeStream(of: Outcome.self)
        let tasks = [
            Task {
                await stop.value
                outcome.yield(.interrupted)
            },
            Task {
                for await event in session.events where event.roomID == room {
                    print(event.raw.sortingKeys().encodedString())
                    flushOutput()
                    if event.typeName == until { outcome.yield(.seen) }
                    if event.type == .memberLeft, event.memberID == membership.memberID {
                        outcome.yield(.ended("our membership ended: \(event.reason ?? "left")"))
                    }
                }
            },
            Task {
                for await state in session.connectionStates {
                    switch state {
                    case .connected: continue
                    case .reconnecting(let attempt, let after):
                        report(json, ["type": .string("session:reconnecting"), "attempt": JSONValue(attempt), "detail": .string(after.detail)],
                               "reconnecting (attempt \(attempt)): \(after.detail)")
                    case .resumed(let sessionID, let resumed, let lost):
                        report(json, ["type": .string("session:resumed"), "session_id": .string(sessionID),
                                      "resumed": .array(resumed.map { .string($0) }), "lost": .array(lost.map { .string($0) })],
                               "resumed as \(sessionID); resumed \(resumed), lost \(lost)")
                        if lost.contains(room) { outcome.yield(.ended("the membership could not be resumed (grace period over)")) }
                    case .closed(let error):
                        outcome.yield(.ended(error.map { "\($0.code): \($0.detail)" } ?? "closed"))
                    }
                }
            },
            Task {
                guard until != nil, let timeout else { return }
                try? await Task.sleep(for: .seconds(timeout))
                outcome.yield(.timedOut)
            },
        ]
        var first: Outcome = .interrupted
        for await next in outcomes {
            first = next
            break
        }
        for task in tasks { task.cancel() }
        switch first {
        case .interrupted, .seen, .timedOut:
            try? await session.leave(room)
            await session.close()
            if case .timedOut = first {
                warn("no \(until ?? "event") within \(timeout ?? 0) s")
                return ExitCode.timedOut
            }
            return ExitCode.success
        case .ended(let why):
            report(json, ["type": .string("session:ended"), "detail": .string(why)], "session ended: \(why)")
            await session.close()
            return ExitCode.failure
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

/// `--until EVENT --timeout SECONDS`, shared by join and watch.
enum UntilOptions {
    static func timeout(_ options: CommandLineOptions) throws(UsageError) -> Double? {
        guard let text = options["--timeout"] else { return nil }
        guard options["--until"] != nil else { throw UsageError(description: "--timeout goes with --until") }
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
            throw UsageError(description: "--timeout must be a positive number of seconds, not \(text)")
        }
        return seconds
    }
}
