#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorLoop
import ParlorMedia
import ParlorMediaClient
import ParlorSRTP

// parlor-media-bench: the forwarding unit's load client (see bench/README.md, "bench/media: the forwarding unit").

func log(_ text: String) { FileHandle.standardError.write(Data("media-bench: \(text)\n".utf8)) }

func die(_ text: String) -> Never {
    log(text)
    exit(1)
}

func sleepUntil(_ condition: () -> Bool, limit seconds: Double) -> Bool {
    let end = MonotonicClock.now() + UInt64(seconds * 1e9)
    while !condition() {
        if MonotonicClock.now() > end { return false }
        usleep(1000)
    }
    return true
}

let options: Options
do { options = try Options.parse(Array(CommandLine.arguments.dropFirst())) } catch { die("\(error)") }
signal(SIGPIPE, SIG_IGN)

let runTag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
let keeper: Keeper
let clock: SpeakerClock
let shards: [ListenerShard]
let members: Members
/// The room's creator, who starts the recording with --record.
var owner: (http: HTTPSetup, token: String, room: String)?
do {
    var room = ""
    var janus: JanusRoom?
    if let url = options.janusURL {
        janus = try JanusRoom(url: url)
    } else {
        let http = HTTPSetup(port: options.port)
        let token = try http.token(name: "mbench-\(runTag)-owner")
        room = try http.createRoom(token: token, name: "media bench \(runTag)")
        owner = (http, token, room)
    }
    keeper = try Keeper()
    clock = try SpeakerClock(payloadBytes: options.payloadBytes)
    shards = try (0..<options.threads).map { try ListenerShard(index: $0, nodes: max(options.ports.count, 1)) }
    members = Members(ports: options.ports, spread: options.spreadPattern, roomID: room, runTag: runTag, keeper: keeper, slots: options.speakers, janus: janus)
} catch { die("setup: \(error)") }

// The floor, in the same run, first: before any peer exists, so the probes' SRTP contexts are the only ones in this
// process, and the server idles. DTLS negotiates AEAD_AES_128_GCM first (SRTPProtectionProfile.preferenceOrder), so
// the probe protects with it; the table names the profile the run actually got.
let rtpBytes = 12 + 8 + options.payloadBytes
var floor: FloorResult?
do {
    log("floor: sendmmsg of \(rtpBytes + 16)-byte datagrams to \(options.floorSockets) loopback sockets, then SRTP protect")
    floor = try FloorProbe.run(datagramBytes: rtpBytes + 16, rtpBytes: rtpBytes, profile: .aeadAES128GCM, sockets: options.floorSockets,
                               seconds: options.floorSeconds, rate: options.floorRate)
} catch { log("floor probe failed: \(error)") }

// Speakers first: the clock starts with the first one, so every listener's window sees a steady stream.
var profile = SRTPProtectionProfile.aeadAES128GCM
do {
    log("\(options.speakers) speaker(s) joining")
    let speakerClock = clock
    let first = try members.joinAll(0..<options.speakers, threads: 1, speaker: true, loopFor: { _ in speakerClock.loop }) { _, peer in
        speakerClock.add(peer)
    }
    profile = first?.profile ?? profile
} catch { die("speakers: \(error)") }

if options.record, let owner {
    do {
        let id = try owner.http.startRecording(token: owner.token, room: owner.room)
        log("recording \(id): every speaker and the mix, for the whole ramp")
    } catch { die("--record: \(error)") }
}

var liveListeners: LiveListeners?
if options.liveListeners > 0, let owner {
    do {
        // The creator joins (a current member's token opens the stream) and stays, kept alive by the keeper.
        let signalling = try Signalling(port: options.port, token: owner.token)
        try signalling.call(.conversationJoin, ["cid": owner.room])
        keeper.adopt(signalling)
        liveListeners = try LiveListeners(port: options.port, room: owner.room, token: owner.token, count: options.liveListeners)
        log("\(options.liveListeners) live-stream listeners reading GET /rooms/\(owner.room)/live.ogg")
    } catch { die("--live-listeners: \(error)") }
}

var result = RunResult(label: options.label, speakers: options.speakers, payloadBytes: options.payloadBytes, srtpProfile: "\(profile)", steps: [],
                       floor: floor)
var joined = 0
for target in options.listenerSteps {
    do {
        log("listeners \(joined) → \(target)")
        let started = MonotonicClock.now()
        clock.setPaused(true)
        defer { clock.setPaused(false) }
        let allShards = shards, allMembers = members
        _ = try members.joinAll(joined..<target, threads: options.setupThreads, speaker: false,
                                loopFor: { allShards[$0 % allShards.count].loop }) { index, peer in
            _ = allShards[index % allShards.count].add(peer, node: allMembers.node(of: index, speaker: false))
        }
        joined = target
        log("  \(target) listeners connected in \(String(format: "%.1f", Double(MonotonicClock.now() - started) / 1e9)) s; settling \(options.settleSeconds) s")
    } catch {
        result.stoppedEarly = "joining listeners up to \(target): \(error)"
        log(result.stoppedEarly!)
        break
    }
    usleep(UInt32(options.settleSeconds * 1e6))

    let ticks = UInt32(options.windowSeconds * 50)
    let from = clock.tick + 25
    let window = from..<(from + ticks)
    for shard in shards { shard.begin(window) }
    clock.begin(window)
    guard sleepUntil({ clock.tick >= window.lowerBound }, limit: 5) else { die("the speakers' clock stopped") }
    let arrivalsBefore = shards.reduce(clock.arrivalCount) { $0 + $1.arrivalCount }
    let liveBytesBefore = liveListeners?.bytesRead ?? 0
    let before = CPUSample.take(serverPID: options.serverPID)
    let nodesBefore = options.serverPIDs.dropFirst().map { CPUSample.take(serverPID: $0) }
    guard sleepUntil({ clock.tick >= window.upperBound }, limit: options.windowSeconds + 10) else { die("the speakers' clock stopped") }
    let after = CPUSample.take(serverPID: options.serverPID)
    let nodesAfter = options.serverPIDs.dropFirst().map { CPUSample.take(serverPID: $0) }
    let arrivalsAfter = shards.reduce(clock.arrivalCount) { $0 + $1.arrivalCount }
    let liveBytesAfter = liveListeners?.bytesRead ?? 0
    usleep(500_000)  // what arrives later than this after the window counts as lost

    var counts: [Int] = [], countNodes: [Int] = []
    var histogram = LatencyHistogram()
    var nodeHistograms = Array(repeating: LatencyHistogram(), count: max(options.ports.count, 1))
    var foreign = 0
    for shard in shards {
        let collected = shard.collect()
        counts += collected.counts
        countNodes += collected.nodes
        for (node, part) in collected.histograms.enumerated() {
            histogram.merge(part)
            nodeHistograms[node].merge(part)
        }
        foreign += collected.foreign
    }
    let speakerSide = clock.collect()
    let expected = Int(ticks) * options.speakers
    let delivered = counts.reduce(0, +)
    let losses = counts.map { 100 * (1 - Double($0) / Double(expected)) }
    let elapsed = Double(after.at - before.at) / 1e9
    // What reached the members while the CPU was measured, whichever tick it carried (behind, the server forwards
    // packets sent before the window): the divisor of CPU per forwarded packet.
    let forwarded = arrivalsAfter - arrivalsBefore
    let media = CPUSample.mediaThreads(before, after)
    let server = after.server - before.server
    let generator = after.generator - before.generator
    let step = StepResult(
        listeners: target, speakers: options.speakers, windowSeconds: elapsed, forwardedPerSecond: Double(forwarded) / elapsed,
        delivery: .init(expectedPerListener: expected, delivered: delivered, speakerDelivered: speakerSide.received,
                        lossPercent: target > 0 ? 100 * (1 - Double(delivered) / Double(expected * target)) : 0,
                        worstListenerLossPercent: losses.max() ?? 0, listenersOver1Percent: losses.filter { $0 > 1 }.count),
        latency: histogram.latency,
        cpu: .init(mediaThreadCores: media.map { $0 / elapsed }, recorderThreadCores: CPUSample.recorderThreads(before, after).map { $0 / elapsed },
                   mixThreadCores: CPUSample.threads(named: "parlor-mix", before, after).map { $0 / elapsed },
                   liveThreadCores: CPUSample.threads(named: "parlor-live", before, after).map { $0 / elapsed },
                   loopThreadCores: CPUSample.threads(named: "parlor-loop", before, after).map { $0 / elapsed },
                   serverCores: server / elapsed,
                   mediaMicrosecondsPerPacket: media.map { forwarded > 0 ? $0 / Double(forwarded) * 1e6 : 0 },
                   serverMicrosecondsPerPacket: forwarded > 0 ? server / Double(forwarded) * 1e6 : 0,
                   generatorCores: generator / elapsed,
                   otherCores: max(0, (after.machineBusy - before.machineBusy) - server - generator) / elapsed),
        foreignPackets: foreign, wsClosedByServer: keeper.closedByServer,
        live: liveListeners.map { .init(listeners: options.liveListeners, bytesPerSecond: Double(liveBytesAfter - liveBytesBefore) / elapsed,
                                         closedByServer: $0.closedByServer) },
        speakerPackets: expected,
        nodes: options.janusURL == nil ? NodeShares.make(pids: options.serverPIDs, before: [before] + nodesBefore, after: [after] + nodesAfter,
                                                              elapsed: elapsed, expected: expected, counts: counts, countNodes: countNodes,
                                                              histograms: nodeHistograms) : nil)
    result.steps.append(step)
    log(Report.row(step))
    if step.delivery.lossPercent > options.stopAboveLoss {
        result.stoppedEarly = String(format: "loss %.1f %% at %d listeners (above --stop-above-loss)", step.delivery.lossPercent, target)
        log(result.stoppedEarly!)
        break
    }
}

liveListeners?.closeAll()
keeper.closeAll()
for shard in shards { shard.closeAll() }
clock.closeAll()

if options.json {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    print(String(decoding: (try? encoder.encode(result)) ?? Data(), as: UTF8.self))
} else {
    print(Report.table(result))
}
