import Foundation

/// parlor-media-bench's command line.
struct Options {
    var port = 0
    /// `--url A,B,…`: every node's port (cluster nodes on one PostgreSQL); the room and the speakers are on the first.
    var ports: [Int] = []
    /// `--listener-spread W0,W1,…`: listener i joins node `spreadPattern[i % count]`, each node index Wk times.
    var spreadPattern: [Int] = [0]
    /// `--janus`: Janus's HTTP API instead of Parlor's (the VideoRoom plugin; one speaker).
    var janusURL: URL?
    var serverPID: Int32 = 0
    /// `--server-pid A,B,…`: each node's process, in `--url`'s order (CPU per node in every step).
    var serverPIDs: [Int32] = []
    var speakers = 1
    var listenerSteps: [Int] = [100]
    var windowSeconds = 10.0
    var settleSeconds = 2.0
    var threads = 2
    var setupThreads = 4
    var payloadBytes = 160
    var floorSockets = 1000
    var floorSeconds = 3.0
    var floorRate = 100_000
    var stopAboveLoss = 20.0
    var label = "media"
    var json = false
    /// `--record`: the room is recorded (issue 38) from when the speakers joined.
    var record = false
    /// `--live-listeners N`: N HTTP listeners of the room's live stream (issue 38) from when the speakers joined.
    var liveListeners = 0

    static let usage = """
        usage: parlor-media-bench (--url http://127.0.0.1:PORT[,…] | --janus http://127.0.0.1:PORT/janus) --server-pid PID[,…]
                                  [--speakers S] [--listeners N1,N2,…] [--listener-spread W1,W2,…]
                                  [--window SECONDS] [--settle SECONDS] [--threads T] [--setup-threads T]
                                  [--payload-bytes B] [--floor-sockets K] [--floor-seconds S] [--floor-rate R]
                                  [--stop-above-loss PERCENT] [--label NAME] [--json] [--record]
                                  [--live-listeners N]
        S speakers and a ramp of listeners (cumulative: each step adds members up to N) join one room over WebSocket and
        media:offer, and complete ICE, DTLS and SRTP with the server's media port on 127.0.0.1. Speakers send a
        packet of B payload bytes every 20 ms; for each step the listeners count what arrives in a window of SECONDS
        (loss, latency p50/p99), and the server's CPU (/proc/PID/stat, its parlor-media thread) gives µs per
        forwarded packet. Then the floor: a sendmmsg-batched datagram of the same size to loopback sockets, and one
        SRTP protect. The ramp stops after a step whose loss exceeds --stop-above-loss (20 %). With --janus the same
        peers join a Janus VideoRoom (one publisher, the listeners subscribers) over Janus's HTTP API; CPU is the
        whole Janus process's. With --record the room's creator starts a recording once the speakers joined
        (POST /rooms/ID/recordings): every speaker's track and the mix are written for the whole ramp, and each step
        reports the server's recorder threads (parlor-record) apart. With --live-listeners N the room's creator joins
        and N HTTP listeners read GET /rooms/ID/live.ogg for the whole ramp; each step reports the live mix's thread
        (parlor-live) and the event loops' threads apart, and the bytes the listeners read. Several --url (nodes of
        one cluster, issue 41) with as many --server-pid: the room and the speakers are on the first node, listeners
        spread over the nodes by the weights of --listener-spread (default: all on the first), and each step reports
        every node's CPU and its listeners' loss and latency. A step of 0 listeners measures the speakers alone;
        steps may repeat (another window at the same count).
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw BenchError("\(arguments[index - 1]) needs a value\n\(usage)") }
            return arguments[index]
        }
        func number<T: LosslessStringConvertible>(_ text: String, _ name: String) throws -> T {
            guard let value = T(text) else { throw BenchError("\(name): not a number: \(text)") }
            return value
        }
        while index < arguments.count {
            let name = arguments[index]
            switch name {
            case "--url":
                options.ports = try value().split(separator: ",").map { url in
                    guard let port = URLComponents(string: String(url))?.port, url.hasPrefix("http://127.0.0.1:") else {
                        throw BenchError("--url must be http://127.0.0.1:PORT (loopback only)")
                    }
                    return port
                }
                options.port = options.ports.first ?? 0
            case "--listener-spread":
                let weights: [Int] = try value().split(separator: ",").map { try number(String($0), name) }
                guard weights.allSatisfy({ (0...1000).contains($0) }), weights.contains(where: { $0 > 0 }) else {
                    throw BenchError("--listener-spread: weights 0…1000, one above 0")
                }
                options.spreadPattern = weights.enumerated().flatMap { Array(repeating: $0.offset, count: $0.element) }
            case "--janus":
                let url = try value()
                guard let parsed = URL(string: url), parsed.port != nil, url.hasPrefix("http://127.0.0.1:") else {
                    throw BenchError("--janus must be http://127.0.0.1:PORT/PATH (loopback only)")
                }
                options.janusURL = parsed
            case "--server-pid":
                options.serverPIDs = try value().split(separator: ",").map { try number(String($0), name) }
                options.serverPID = options.serverPIDs.first ?? 0
            case "--speakers": options.speakers = try number(try value(), name)
            case "--listeners": options.listenerSteps = try value().split(separator: ",").map { try number(String($0), name) }
            case "--window": options.windowSeconds = try number(try value(), name)
            case "--settle": options.settleSeconds = try number(try value(), name)
            case "--threads": options.threads = try number(try value(), name)
            case "--setup-threads": options.setupThreads = try number(try value(), name)
            case "--payload-bytes": options.payloadBytes = try number(try value(), name)
            case "--floor-sockets": options.floorSockets = try number(try value(), name)
            case "--floor-seconds": options.floorSeconds = try number(try value(), name)
            case "--floor-rate": options.floorRate = try number(try value(), name)
            case "--stop-above-loss": options.stopAboveLoss = try number(try value(), name)
            case "--label": options.label = try value()
            case "--json": options.json = true
            case "--record": options.record = true
            case "--live-listeners": options.liveListeners = try number(try value(), name)
            case "--help", "-h": print(usage); exit(0)
            default: throw BenchError("unknown option \(name)\n\(usage)")
            }
            index += 1
        }
        guard options.port > 0 || options.janusURL != nil, options.serverPID > 0 else {
            throw BenchError("--url (or --janus) and --server-pid are required\n\(usage)")
        }
        guard options.janusURL == nil || options.speakers == 1 else { throw BenchError("--janus: one speaker") }
        guard options.janusURL == nil || !options.record else { throw BenchError("--record: Parlor only, not with --janus") }
        guard options.janusURL == nil || options.liveListeners == 0 else { throw BenchError("--live-listeners: Parlor only, not with --janus") }
        guard (0...5_000).contains(options.liveListeners) else { throw BenchError("--live-listeners 0…5000") }
        guard (1...64).contains(options.speakers), (1...16).contains(options.threads), (1...32).contains(options.setupThreads) else {
            throw BenchError("--speakers 1…64, --threads 1…16, --setup-threads 1…32")
        }
        guard !options.listenerSteps.isEmpty, options.listenerSteps.allSatisfy({ (0...20_000).contains($0) }),
              options.listenerSteps == options.listenerSteps.sorted() else { throw BenchError("--listeners: non-decreasing counts, 0…20,000") }
        guard options.janusURL != nil || options.serverPIDs.count == max(options.ports.count, 1) else {
            throw BenchError("--server-pid: one PID per --url")
        }
        guard options.spreadPattern.allSatisfy({ $0 < max(options.ports.count, 1) }) else {
            throw BenchError("--listener-spread: one weight per --url at most")
        }
        guard (ProbePayloadLimits.minimum...1000).contains(options.payloadBytes) else { throw BenchError("--payload-bytes 18…1000") }
        guard (0.5...120).contains(options.windowSeconds), (0...60).contains(options.settleSeconds), (0.2...30).contains(options.floorSeconds),
              (1...5000).contains(options.floorSockets), (1000...2_000_000).contains(options.floorRate) else {
            throw BenchError("--window 0.5…120, --settle 0…60, --floor-seconds 0.2…30, --floor-sockets 1…5000, --floor-rate 1000…2000000")
        }
        return options
    }
}

enum ProbePayloadLimits {
    static let minimum = 18
}
