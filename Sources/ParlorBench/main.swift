#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorLoop

// parlor-bench: N clients authenticate (POST /auth), R rooms are created (POST /rooms), N WebSockets connect and
// join round-robin, then leave/join churn runs at a set rate for a bounded time, then every socket closes cleanly.
// Everything goes to one server on a loopback address; counts and time are bounded by the flags.

// MARK: Setup

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
let descriptorLimit = ProcessSetup.prepareForServing() ?? -1  // ignores SIGPIPE too
if let probe = options.floorProbe {
    if probe.sockets * 2 + 64 > descriptorLimit { die("--floor-sockets \(probe.sockets) needs more descriptors than the limit \(descriptorLimit)") }
    let result = probe.run()
    if options.json {
        let data = try! JSONSerialization.data(withJSONObject: result.json(probe), options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    } else {
        print(String(format: "floor: %.2f µs of sender CPU per writev of %d bytes (%d writes to %d loopback sockets in %.1f s)",
                     result.microsecondsPerWrite, probe.frameBytes, result.writes, probe.sockets, result.wallSeconds))
    }
    exit(0)
}
if options.clients + 64 > descriptorLimit {
    die("--clients \(options.clients) needs more descriptors than the limit \(descriptorLimit)")
}
let serverAddresses = options.endpoints.map { endpoint in
    guard let address = SocketAddress(host: endpoint.host, port: endpoint.port) else { die("--url: \(endpoint.host) is not an IPv4 address") }
    return address
}
if options.audience { AudienceRun.run(options, address: serverAddresses[0]) }
let runTag = String(UInt64(Clock.now()) % 1_000_000_000, radix: 36)
let namePrefix = "bench-\(runTag)-"

let wallStart = Clock.now()
note("run \(runTag): \(options.clients) clients, \(options.rooms) rooms, churn \(options.churnRate)/s for \(options.duration) s")
let authStart = Clock.now()
let tokens = Setup.authenticate(options, namePrefix: namePrefix)
let authSeconds = Double(Clock.now() - authStart) / 1e9
let roomsStart = Clock.now()
let roomIDs = Setup.createRooms(options, tokens: tokens, runTag: runTag)
let roomsSeconds = Double(Clock.now() - roomsStart) / 1e9
note(String(format: "setup: %d auths in %.2f s, %d rooms in %.2f s", options.clients, authSeconds, options.rooms, roomsSeconds))

// MARK: Ramp

let shared = SharedState(clientCount: options.clients, roomCount: options.rooms, nodeCount: options.endpoints.count)
let threadCount = min(options.threads, options.clients)
var partitions: [[ClientAssignment]] = Array(repeating: [], count: threadCount)
for index in 0..<options.clients {
    partitions[index % threadCount].append(ClientAssignment(index: index, token: tokens[index], roomID: roomIDs[index % options.rooms],
                                                            node: shared.node(ofClient: index)))
}
let settings = WorkerSettings(endpoints: options.endpoints, addresses: serverAddresses, namePrefix: namePrefix,
                              churnRatePerSecond: options.churnRate,
                              rampConcurrency: max(1, options.rampConcurrency / threadCount))
let workers: [Worker]
do {
    workers = try (0..<threadCount).map { (id) throws(SystemError) in
        try Worker(id: id, settings: settings, shared: shared, clients: partitions[id], workerCount: threadCount)
    }
} catch {
    die("cannot start the workers' event loops: \(error)")
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
if let readyFile = options.readyFile, let goFile = options.goFile {
    // Several generator processes: the coordinator opens every window at once, when all have ramped.
    guard FileManager.default.createFile(atPath: readyFile, contents: Data("\(joinedAfterRamp)\n".utf8)) else { die("cannot write \(readyFile)") }
    let giveUp = Clock.now() + Int64(options.rampTimeout * 1e9)
    while !FileManager.default.fileExists(atPath: goFile) {
        if Clock.now() > giveUp { die("no \(goFile) within --ramp-timeout") }
        usleep(5_000)
    }
}
usleep(UInt32(options.settle * 1e6))

// MARK: Measured window

let serverBefore = options.serverPID.flatMap { ProcessSample.read(pid: $0) }
let ownBefore = ownCPUSeconds()
let machineBefore = MachineSample.read()
let windowStart = Clock.now()
let windowStartUnix = Date().timeIntervalSince1970
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
let machineAfter = MachineSample.read()
let serverAfter = options.serverPID.flatMap { ProcessSample.read(pid: $0) }
let heldAtEnd = shared.openCount.load(ordering: .relaxed)
let joinedAtEnd = shared.joinedCount.load(ordering: .relaxed)

// Let the operations in flight finish (bounded), then close every socket.
let drainDeadline = Clock.now() + 5_000_000_000
while shared.outstandingOps.load(ordering: .relaxed) > 0, Clock.now() < drainDeadline { usleep(10_000) }
shared.phase.store(SharedState.Phase.close.rawValue, ordering: .releasing)
for worker in workers { worker.waitUntilFinished() }
let serverFinal = options.serverPID.flatMap { ProcessSample.read(pid: $0) }

// MARK: Report

var stats = WorkerStats()
for worker in workers { stats.merge(worker.stats) }
let report = RunReport(
    options: options, runTag: runTag, generatorThreads: threadCount, authSeconds: authSeconds, roomsSeconds: roomsSeconds,
    rampSeconds: rampSeconds, joinedAfterRamp: joinedAfterRamp, windowSeconds: windowSeconds, heldAtEnd: heldAtEnd,
    minimumOpen: minimumOpen, joinedAtEnd: joinedAtEnd, stats: stats, ownCPU: ownAfter - ownBefore,
    machine: machineAfter - machineBefore, serverBefore: serverBefore, serverAfter: serverAfter, serverFinal: serverFinal,
    peakServerRSSKiB: peakServerRSS, wallSeconds: Double(Clock.now() - wallStart) / 1e9, windowStartUnix: windowStartUnix)
if options.json { report.printJSON() } else { report.printText() }
exit(report.errorCount == 0 ? 0 : 1)
