#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The command line: what to run against which server, and how the report is printed.
struct Options {
    var host = "127.0.0.1"
    var port = 8080
    /// Every `--url`, in order; the first is also `host`/`port`. Each room's members are spread over them.
    var endpoints: [Endpoint] = []
    var clients = 100
    var rooms = 10
    var churnRate = 100.0
    var duration = 10.0
    var serverPID: Int32?
    var json = false
    var threads = 1
    var rampConcurrency = 256
    var setupThreads = 4
    var settle = 1.0
    var label = ""
    var rampTimeout = 180.0
    /// A barrier between several generator processes: after the ramp write `readyFile`, then wait for `goFile`.
    var readyFile: String?
    var goFile: String?
    /// `--scenario audience`: one stage room filled at `joinRate` (AudienceRun.swift) instead of rooms and churn.
    var audience = false
    var joinRate = 500.0
    var speakingInterval = 2.0
    var roleInterval = 5.0
    /// Only the floor probe (no server): `--floor-probe`.
    var floorProbe: FloorProbe?

    static let usage = """
        Usage: parlor-bench [options]
          --url URL             server base URL (http://127.0.0.1:8080); loopback addresses only. Repeat it (or
                                give a comma-separated list) for several nodes: each room's members are spread
                                over them in turn and fan-out is also reported split same-node / cross-node
          --clients N           WebSocket clients (100)
          --rooms R             rooms, joined round-robin (10): rooms hold clients/rooms members
          --churn-rate J        leave+join operations per second during the measured window (100)
          --duration S          seconds of churn (10)
          --server-pid PID      read the server's CPU and memory from /proc/PID
          --threads T           generator event-loop threads (1)
          --ramp-concurrency C  connections being opened at once (256)
          --settle S            seconds between the ramp and the window (1)
          --ramp-timeout S      give up waiting for the ramp after S seconds (180)
          --ready-file PATH     after the ramp, write the joined count to PATH, then wait (up to --ramp-timeout)
          --go-file PATH        for PATH to exist before the settle and the window (several generator processes)
          --scenario audience   one stage room: a moderator, a speaker and --clients minus 2 listeners joining at
                                --join-rate, then --duration seconds held (AudienceRun.swift)
          --join-rate J         audience: joins per second during the fill (500)
          --speaking-interval S audience: the speaker's speaking state flips every S seconds (2)
          --role-interval S     audience: the moderator promotes or demotes one listener every S seconds (5)
          --label TEXT          name carried into the JSON report
          --json                print the report as JSON on stdout
          --floor-probe         no server: time one writev of an event-sized frame to loopback sockets (the floor)
          --floor-sockets N     sockets written round-robin by the probe (1000)
          --floor-frame-bytes B frame size for the probe (200)
          --floor-seconds S     how long the probe writes (2)
        """

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        func value(_ flag: String) -> String {
            index += 1
            guard index < arguments.count else { die("\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--url": for url in value(argument).split(separator: ",") { options.addURL(String(url)) }
            case "--clients": options.clients = positive(value(argument), argument)
            case "--rooms": options.rooms = positive(value(argument), argument)
            case "--churn-rate": options.churnRate = number(value(argument), argument)
            case "--duration": options.duration = number(value(argument), argument)
            case "--server-pid": options.serverPID = Int32(positive(value(argument), argument))
            case "--threads": options.threads = positive(value(argument), argument)
            case "--ramp-concurrency": options.rampConcurrency = positive(value(argument), argument)
            case "--setup-threads": options.setupThreads = positive(value(argument), argument)
            case "--settle": options.settle = number(value(argument), argument)
            case "--ramp-timeout": options.rampTimeout = number(value(argument), argument)
            case "--ready-file": options.readyFile = value(argument)
            case "--go-file": options.goFile = value(argument)
            case "--scenario":
                guard value(argument) == "audience" else { die("--scenario: only \"audience\" (the default is rooms and churn)") }
                options.audience = true
            case "--join-rate": options.joinRate = number(value(argument), argument)
            case "--speaking-interval": options.speakingInterval = number(value(argument), argument)
            case "--role-interval": options.roleInterval = number(value(argument), argument)
            case "--label": options.label = value(argument)
            case "--json": options.json = true
            case "--floor-probe": options.floorProbe = options.floorProbe ?? FloorProbe()
            case "--floor-sockets": options.floorProbe = options.floorProbe ?? FloorProbe(); options.floorProbe?.sockets = positive(value(argument), argument)
            case "--floor-frame-bytes": options.floorProbe = options.floorProbe ?? FloorProbe(); options.floorProbe?.frameBytes = positive(value(argument), argument)
            case "--floor-seconds": options.floorProbe = options.floorProbe ?? FloorProbe(); options.floorProbe?.seconds = number(value(argument), argument)
            case "--help", "-h":
                print(usage)
                exit(0)
            default: die("unknown option \(argument)\n\(usage)")
            }
            index += 1
        }
        guard options.duration > 0, options.duration <= 3600 else { die("--duration must be within (0, 3600] seconds") }
        guard options.churnRate >= 0, options.churnRate <= 1_000_000 else { die("--churn-rate must be within [0, 1000000]") }
        guard options.clients <= 100_000 else { die("--clients is at most 100000") }
        guard !options.audience || (options.clients >= 3 && options.joinRate > 0 && options.speakingInterval > 0 && options.roleInterval > 0)
        else { die("--scenario audience needs --clients ≥ 3 and positive --join-rate, --speaking-interval, --role-interval") }
        guard (options.readyFile == nil) == (options.goFile == nil) else { die("--ready-file and --go-file go together") }
        if options.endpoints.isEmpty { options.endpoints = [Endpoint(host: options.host, port: options.port)] }
        return options
    }

    mutating func addURL(_ text: String) {
        guard text.hasPrefix("http://") else { die("--url must start with http://") }
        let rest = text.dropFirst("http://".count).split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        let parts = rest.split(separator: ":")
        var host = parts.first.map(String.init) ?? "127.0.0.1"
        if host == "localhost" { host = "127.0.0.1" }
        let port = parts.count > 1 ? Int(parts[1]) ?? 80 : 80
        // Load goes to this machine only.
        guard host.hasPrefix("127.") else { die("--url must be a loopback address (127.x.x.x)") }
        if endpoints.isEmpty {
            self.host = host
            self.port = port
        }
        endpoints.append(Endpoint(host: host, port: port))
    }

    private static func number(_ text: String, _ flag: String) -> Double {
        guard let value = Double(text), value >= 0 else { die("\(flag) takes a number ≥ 0") }
        return value
    }

    private static func positive(_ text: String, _ flag: String) -> Int {
        guard let value = Int(text), value > 0 else { die("\(flag) takes a positive whole number") }
        return value
    }
}

func die(_ message: String) -> Never {
    FileHandle.standardError.write(Data("parlor-bench: \(message)\n".utf8))
    exit(2)
}

func note(_ message: String) {
    FileHandle.standardError.write(Data("parlor-bench: \(message)\n".utf8))
}
