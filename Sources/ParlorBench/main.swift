#if canImport(Glibc)
import Glibc
#endif
import Foundation

// parlor-bench: N clients authenticate (POST /auth), R rooms are created (POST /rooms), N WebSockets connect and
// join round-robin, then leave/join churn runs at a set rate for a bounded time, then every socket closes cleanly.
// Everything goes to one server on a loopback address; counts and time are bounded by the flags.

struct Options {
    var host = "127.0.0.1"
    var port = 8080
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

    static let usage = """
        Usage: parlor-bench [options]
          --url URL             server base URL (http://127.0.0.1:8080); loopback addresses only
          --clients N           WebSocket clients (100)
          --rooms R             rooms, joined round-robin (10): rooms hold clients/rooms members
          --churn-rate J        leave+join operations per second during the measured window (100)
          --duration S          seconds of churn (10)
          --server-pid PID      read the server's CPU and memory from /proc/PID
          --threads T           generator event-loop threads (1)
          --ramp-concurrency C  connections being opened at once (256)
          --settle S            seconds between the ramp and the window (1)
          --label TEXT          name carried into the JSON report
          --json                print the report as JSON on stdout
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
            case "--url": options.setURL(value(argument))
            case "--clients": options.clients = positive(value(argument), argument)
            case "--rooms": options.rooms = positive(value(argument), argument)
            case "--churn-rate": options.churnRate = number(value(argument), argument)
            case "--duration": options.duration = number(value(argument), argument)
            case "--server-pid": options.serverPID = Int32(positive(value(argument), argument))
            case "--threads": options.threads = positive(value(argument), argument)
            case "--ramp-concurrency": options.rampConcurrency = positive(value(argument), argument)
            case "--setup-threads": options.setupThreads = positive(value(argument), argument)
            case "--settle": options.settle = number(value(argument), argument)
            case "--label": options.label = value(argument)
            case "--json": options.json = true
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
        return options
    }

    mutating func setURL(_ text: String) {
        guard text.hasPrefix("http://") else { die("--url must start with http://") }
        let rest = text.dropFirst("http://".count).split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        let parts = rest.split(separator: ":")
        host = parts.first.map(String.init) ?? "127.0.0.1"
        if host == "localhost" { host = "127.0.0.1" }
        port = parts.count > 1 ? Int(parts[1]) ?? 80 : 80
        // Load goes to this machine only.
        guard host.hasPrefix("127.") else { die("--url must be a loopback address (127.x.x.x)") }
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

// MARK: Setup

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
signal(SIGPIPE, SIG_IGN)
let descriptorLimit = Sockets.raiseDescriptorLimit()
if options.clients + 64 > descriptorLimit {
    die("--clients \(options.clients) needs more descriptors than the limit \(descriptorLimit)")
}
let runTag = String(UInt64(Clock.now()) % 1_000_000_000, radix: 36)
let namePrefix = "bench-\(runTag)-"

/// POST /auth for every client, on a few keep-alive connections in parallel.
func authenticate() -> [String] {
    let tokens = SetupResults(count: options.clients)
    let group = DispatchGroup()
    let threadCount = min(options.setupThreads, options.clients)
    for thread in 0..<threadCount {
        group.enter()
        Thread {
            let client = SetupClient(host: options.host, port: options.port)
            var index = thread
            while index < options.clients {
                let body = "{\"name\":\"\(namePrefix)\(index)\"}"
                if let response = client.request("POST", "/auth", body: body), response.status == 200,
                   let token = JSONScan.string("jwt", in: response.text) {
                    tokens.set(index, token)
                } else {
                    tokens.fail()
                }
                index += threadCount
            }
            group.leave()
        }.start()
    }
    group.wait()
    if tokens.failures > 0 { die("\(tokens.failures) of \(options.clients) POST /auth requests failed") }
    return tokens.values
}

final class SetupResults: @unchecked Sendable {  // each index is written by one thread; counts behind the lock
    private let lock = NSLock()
    private var storage: [String]
    private var failed = 0

    init(count: Int) { storage = Array(repeating: "", count: count) }
    func set(_ index: Int, _ value: String) { lock.lock(); storage[index] = value; lock.unlock() }
    func fail() { lock.lock(); failed += 1; lock.unlock() }
    var values: [String] { lock.lock(); defer { lock.unlock() }; return storage }
    var failures: Int { lock.lock(); defer { lock.unlock() }; return failed }
}

/// POST /rooms, each room by a different client in turn (the server limits the rooms one user may create).
func createRooms(tokens: [String]) -> [String] {
    let client = SetupClient(host: options.host, port: options.port)
    var ids: [String] = []
    for index in 0..<options.rooms {
        let token = tokens[index % tokens.count]
        let body = "{\"display_name\":\"bench \(runTag) \(index)\",\"properties\":{\"ttl\":3600}}"
        guard let response = client.request("POST", "/rooms", body: body, bearer: token), response.status == 201,
              let id = JSONScan.string("id", in: response.text) else {
            let response = client.request("POST", "/rooms", body: body, bearer: token)
            die("POST /rooms failed: \(response.map { "\($0.status) \($0.text)" } ?? "no response")")
        }
        ids.append(id)
    }
    return ids
}

let wallStart = Clock.now()
note("run \(runTag): \(options.clients) clients, \(options.rooms) rooms, churn \(options.churnRate)/s for \(options.duration) s")
let authStart = Clock.now()
let tokens = authenticate()
let authSeconds = Double(Clock.now() - authStart) / 1e9
let roomsStart = Clock.now()
let roomIDs = createRooms(tokens: tokens)
let roomsSeconds = Double(Clock.now() - roomsStart) / 1e9
note(String(format: "setup: %d auths in %.2f s, %d rooms in %.2f s", options.clients, authSeconds, options.rooms, roomsSeconds))

// MARK: Ramp

let shared = SharedState(clientCount: options.clients)
let threadCount = min(options.threads, options.clients)
var partitions: [[BenchClient]] = Array(repeating: [], count: threadCount)
for index in 0..<options.clients {
    partitions[index % threadCount].append(BenchClient(index: index, token: tokens[index], roomID: roomIDs[index % options.rooms]))
}
let settings = WorkerSettings(host: options.host, port: options.port, namePrefix: namePrefix,
                              churnRatePerSecond: options.churnRate,
                              rampConcurrency: max(1, options.rampConcurrency / threadCount))
let workers = (0..<threadCount).map {
    Worker(id: $0, settings: settings, shared: shared, clients: partitions[$0], workerCount: threadCount)
}
let rampStart = Clock.now()
for worker in workers { worker.start() }
var lastReport = rampStart
while shared.joinedCount.load(ordering: .relaxed) + shared.failedCount.load(ordering: .relaxed) < options.clients {
    usleep(20_000)
    let now = Clock.now()
    if now - lastReport > 2_000_000_000 {
        lastReport = now
        note("ramp: \(shared.joinedCount.load(ordering: .relaxed)) joined, \(shared.failedCount.load(ordering: .relaxed)) failed")
    }
    if Double(now - rampStart) / 1e9 > options.rampTimeout {
        note("ramp timed out")
        break
    }
}
let rampSeconds = Double(Clock.now() - rampStart) / 1e9
let joinedAfterRamp = shared.joinedCount.load(ordering: .relaxed)
note(String(format: "ramp: %d joined in %.2f s", joinedAfterRamp, rampSeconds))
usleep(UInt32(options.settle * 1e6))

// MARK: Measured window

let serverBefore = options.serverPID.flatMap { ProcessSample.read(pid: $0) }
let ownBefore = ownCPUSeconds()
let machineBefore = machineBusyCPUSeconds()
let windowStart = Clock.now()
shared.phase.store(SharedState.Phase.churn.rawValue, ordering: .releasing)
var peakServerRSS = serverBefore?.rssKiB ?? 0
let windowEnd = windowStart + Int64(options.duration * 1e9)
var minimumOpen = Int.max
while Clock.now() < windowEnd {
    usleep(100_000)
    minimumOpen = min(minimumOpen, shared.openCount.load(ordering: .relaxed))
    if let pid = options.serverPID, let sample = ProcessSample.read(pid: pid) { peakServerRSS = max(peakServerRSS, sample.rssKiB) }
}
shared.phase.store(SharedState.Phase.drain.rawValue, ordering: .releasing)
let windowSeconds = Double(Clock.now() - windowStart) / 1e9
let ownAfter = ownCPUSeconds()
let machineAfter = machineBusyCPUSeconds()
let serverAfter = options.serverPID.flatMap { ProcessSample.read(pid: $0) }
let heldAtEnd = shared.openCount.load(ordering: .relaxed)
let joinedAtEnd = shared.joinedCount.load(ordering: .relaxed)

// Let the operations in flight finish (bounded), then close every socket.
let drainDeadline = Clock.now() + 5_000_000_000
while shared.outstandingOps.load(ordering: .relaxed) > 0, Clock.now() < drainDeadline { usleep(10_000) }
shared.phase.store(SharedState.Phase.close.rawValue, ordering: .releasing)
for worker in workers { worker.finished.wait() }
let serverFinal = options.serverPID.flatMap { ProcessSample.read(pid: $0) }

// MARK: Report

var stats = WorkerStats()
for worker in workers {
    let part = worker.stats
    stats.joinRTT += part.joinRTT
    stats.joinSentOffset += part.joinSentOffset
    stats.initialJoinRTT += part.initialJoinRTT
    stats.fanOut += part.fanOut
    stats.eventsInWindow += part.eventsInWindow
    stats.eventsTotal += part.eventsTotal
    stats.opsIssued += part.opsIssued
    stats.opsSkipped += part.opsSkipped
    stats.pingsAnswered += part.pingsAnswered
    stats.closedCleanly += part.closedCleanly
    for (kind, count) in part.errors { stats.errors[kind, default: 0] += count }
}

func percentiles(_ samples: [Int64]) -> [String: Double] {
    guard !samples.isEmpty else { return ["count": 0] }
    let sorted = samples.sorted()
    func at(_ p: Double) -> Double {
        let rank = max(0, min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1))
        return Double(sorted[rank]) / 1e6
    }
    return ["count": Double(sorted.count), "p50_ms": at(0.50), "p90_ms": at(0.90), "p99_ms": at(0.99), "p999_ms": at(0.999),
            "max_ms": Double(sorted.last!) / 1e6]
}

/// Join round trips per second of the window: count, p50, p99 and max, to see stalls in time.
@MainActor func timeline() -> [[String: Double]] {
    var buckets: [Int: [Int64]] = [:]
    for (offset, rtt) in zip(stats.joinSentOffset, stats.joinRTT) { buckets[Int(offset / 1_000_000_000), default: []].append(rtt) }
    return buckets.keys.sorted().map { second in
        let values = percentiles(buckets[second]!)
        return ["second": Double(second), "joins": values["count"] ?? 0, "p50_ms": values["p50_ms"] ?? 0,
                "p99_ms": values["p99_ms"] ?? 0, "max_ms": values["max_ms"] ?? 0]
    }
}

let errorCount = stats.errors.values.reduce(0, +)
let ownCPU = ownAfter - ownBefore
let machineCPU = machineAfter - machineBefore
let serverCPU = (serverAfter?.cpuSeconds ?? 0) - (serverBefore?.cpuSeconds ?? 0)
let coreCount = Double(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
var report: [String: Any] = [
    "label": options.label,
    "run": runTag,
    "clients": options.clients,
    "rooms": options.rooms,
    "members_per_room": Double(options.clients) / Double(options.rooms),
    "churn_rate_target": options.churnRate,
    "generator_threads": threadCount,
    "setup": ["auth_seconds": authSeconds, "auth_per_second": Double(options.clients) / authSeconds,
              "rooms_seconds": roomsSeconds, "ramp_seconds": rampSeconds, "joined_after_ramp": joinedAfterRamp],
    "window_seconds": windowSeconds,
    "connections_held": heldAtEnd,
    "connections_held_min": minimumOpen == Int.max ? heldAtEnd : minimumOpen,
    "joined_at_end": joinedAtEnd,
    "ops_issued": stats.opsIssued,
    "ops_skipped": stats.opsSkipped,
    "joins_per_second": Double(stats.joinRTT.count) / windowSeconds,
    "join_rtt": percentiles(stats.joinRTT),
    "initial_join_rtt": percentiles(stats.initialJoinRTT),
    "join_timeline": timeline(),
    "fanout": percentiles(stats.fanOut),
    "events_in_window": stats.eventsInWindow,
    "events_total": stats.eventsTotal,
    "events_per_second": Double(stats.eventsInWindow) / windowSeconds,
    "pings_answered": stats.pingsAnswered,
    "closed_cleanly": stats.closedCleanly,
    "errors": errorCount,
    "error_kinds": stats.errors,
    // CPU used by everything else on the machine during the window: other work competing with the server.
    "machine": ["cores": coreCount, "busy_cpu_seconds": machineCPU,
                "other_processes_cpu_seconds": max(0, machineCPU - ownCPU - serverCPU),
                "other_processes_cores": max(0, machineCPU - ownCPU - serverCPU) / windowSeconds,
                "idle_cores": max(0, coreCount - machineCPU / windowSeconds)],
    "generator": ["cpu_seconds": ownCPU, "cpu_percent_of_one_core": ownCPU / windowSeconds * 100,
                  "peak_rss_mib": Double(ownPeakRSSKiB()) / 1024, "wall_seconds": Double(Clock.now() - wallStart) / 1e9],
]
if let before = serverBefore, let after = serverAfter {
    let cpu = after.cpuSeconds - before.cpuSeconds
    report["server"] = [
        "pid": Int(options.serverPID!),
        "cpu_seconds": cpu,
        "cpu_percent_of_one_core": cpu / windowSeconds * 100,
        "cpu_us_per_event": stats.eventsInWindow > 0 ? cpu / Double(stats.eventsInWindow) * 1e6 : 0,
        "events_per_cpu_second": cpu > 0 ? Double(stats.eventsInWindow) / cpu : 0,
        "rss_mib_window_peak": Double(peakServerRSS) / 1024,
        "peak_rss_mib": Double((serverFinal ?? after).peakRSSKiB) / 1024,
        "threads": after.threads,
    ] as [String: Any]
}

if options.json {
    let data = try! JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
} else {
    func ms(_ stats: [String: Double], _ key: String) -> String { String(format: "%.3f", stats[key] ?? 0) }
    let join = percentiles(stats.joinRTT), fan = percentiles(stats.fanOut)
    print("connections held       \(heldAtEnd) (min during window \(report["connections_held_min"]!))")
    print("joins                  \(stats.joinRTT.count) in \(String(format: "%.1f", windowSeconds)) s (\(String(format: "%.0f", Double(stats.joinRTT.count) / windowSeconds))/s), skipped \(stats.opsSkipped)")
    print("join round trip ms     p50 \(ms(join, "p50_ms"))  p99 \(ms(join, "p99_ms"))  p99.9 \(ms(join, "p999_ms"))  max \(ms(join, "max_ms"))")
    print("fan-out ms             p50 \(ms(fan, "p50_ms"))  p99 \(ms(fan, "p99_ms"))  p99.9 \(ms(fan, "p999_ms"))  (\(stats.fanOut.count) samples)")
    print("events delivered/s     \(String(format: "%.0f", Double(stats.eventsInWindow) / windowSeconds))")
    print("errors                 \(errorCount) \(stats.errors)")
    let slow = timeline().filter { ($0["max_ms"] ?? 0) > 50 }
        .map { String(format: "%.0fs:%.0fms", $0["second"] ?? 0, $0["max_ms"] ?? 0) }
    if !slow.isEmpty { print("seconds with a join over 50 ms: \(slow.joined(separator: " "))") }
    print("pings answered         \(stats.pingsAnswered)")
    if let server = report["server"] as? [String: Any] {
        print(String(format: "server CPU             %.2f s (%.0f%% of a core), %.2f µs/event, peak RSS %.1f MiB",
                     server["cpu_seconds"] as! Double, server["cpu_percent_of_one_core"] as! Double,
                     server["cpu_us_per_event"] as! Double, server["peak_rss_mib"] as! Double))
    }
    print(String(format: "generator CPU          %.2f s (%.0f%% of a core)", ownCPU, ownCPU / windowSeconds * 100))
    print(String(format: "other processes        %.2f cores busy beside server and generator; %.2f of %.0f cores idle",
                 max(0, machineCPU - ownCPU - serverCPU) / windowSeconds, max(0, coreCount - machineCPU / windowSeconds), coreCount))
}
exit(errorCount == 0 ? 0 : 1)
