#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorLoop

/// `--scenario audience`: sets up one stage room, runs `AudienceScenario` on one event loop, samples the server's
/// memory from this thread, and reports (JSON for bench/audience_report.py, or text).
enum AudienceRun {
    static func run(_ options: Options, address: SocketAddress) -> Never {
        let runTag = String(UInt64(Clock.now()) % 1_000_000_000, radix: 36)
        let namePrefix = "aud-\(runTag)-"
        note("audience run \(runTag): \(options.clients) members joining one stage room at \(options.joinRate)/s, held \(options.duration) s")
        let tokens = Setup.authenticate(options, namePrefix: namePrefix)
        let client = SetupClient(host: options.host, port: options.port)
        let body = "{\"display_name\":\"audience \(runTag)\",\"properties\":{\"mode\":\"stage\",\"ttl\":3600}}"
        guard let response = client.request("POST", "/rooms", body: body, bearer: tokens[0]), response.status == 201,
              let roomID = JSONScan.string("id", in: response.text) else { die("POST /rooms (stage) failed") }
        let scenario: AudienceScenario
        do {
            scenario = try AudienceScenario(options: options, address: address, roomID: roomID, namePrefix: namePrefix, tokens: tokens)
        } catch {
            die("cannot start the event loop: \(error)")
        }
        let ownBefore = ownCPUSeconds()
        let machineBefore = MachineSample.read()
        scenario.start()
        var peakFillKiB = 0, peakKiB = 0, lastNote = Clock.now()
        while scenario.phase != .done {
            usleep(50_000)
            if let pid = options.serverPID, let sample = ProcessSample.read(pid: pid) {
                peakKiB = max(peakKiB, sample.rssKiB)
                if scenario.phase == .fill { peakFillKiB = max(peakFillKiB, sample.rssKiB) }
            }
            if Clock.now() - lastNote > 2_000_000_000 {
                lastNote = Clock.now()
                note("\(scenario.phase): \(scenario.progress.joined.load(ordering: .relaxed)) joined, \(scenario.progress.failed.load(ordering: .relaxed)) failed")
            }
        }
        scenario.waitUntilFinished()
        let report = AudienceReport(options: options, runTag: runTag, scenario: scenario, peakFillRSSKiB: peakFillKiB, peakRSSKiB: peakKiB,
                                    generatorCPU: ownCPUSeconds() - ownBefore, machine: MachineSample.read() - machineBefore)
        let object = report.json()
        if options.json {
            let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
            print(String(decoding: data, as: UTF8.self))
        }
        exit(scenario.errors.isEmpty ? 0 : 1)
    }
}

/// What the audience scenario measured, as the JSON object bench/audience_report.py grades against issue 37's targets.
struct AudienceReport {
    var options: Options
    var runTag: String
    var scenario: AudienceScenario
    var peakFillRSSKiB: Int
    var peakRSSKiB: Int
    var generatorCPU: Double
    var machine: MachineSample

    func json() -> [String: Any] {
        let s = scenario
        let fillSeconds = Double(s.fillEnd - s.fillStart) / 1e9
        let holdSeconds = Double(s.holdEnd - s.fillEnd) / 1e9
        func cores(_ from: ProcessSample?, _ to: ProcessSample?, _ seconds: Double) -> Double? {
            guard let from, let to, seconds > 0 else { return nil }
            return (to.cpuSeconds - from.cpuSeconds) / seconds
        }
        let listeners = s.clients.filter { $0.role == .listener && $0.joinedAt > 0 }
        // The rate during the fill, over the members that were in the room at least 2 s of it.
        let inFillLong = listeners.filter { s.fillEnd - $0.joinedAt >= 2_000_000_000 }
        func fillRate(_ bytes: (AudienceClient) -> Int) -> [String: Double] {
            summary(inFillLong.map { Double(bytes($0)) / (Double(s.fillEnd - $0.joinedAt) / 1e9) })
        }
        // The steady window: listeners in the room, in summary presence, from its start (and still in it at its end).
        let steadySeconds = Double(min(s.steadyWindow.upperBound, s.fillEnd) - s.steadyWindow.lowerBound) / 1e9
        let steady = listeners.filter { $0.summarySince > 0 && $0.summarySince <= s.steadyWindow.lowerBound && $0.state != .failed }
        func steadyRate(_ bytes: (AudienceClient) -> Int) -> [String: Double] {
            steadySeconds > 0 ? summary(steady.map { Double(bytes($0)) / steadySeconds }) : ["count": 0]
        }
        func holdRate(_ bytes: (AudienceClient) -> Int) -> [String: Double] {
            holdSeconds > 0 ? summary(listeners.map { Double(bytes($0)) / holdSeconds }) : [:]
        }
        return [
            "label": options.label, "run": runTag, "members": options.clients, "join_rate": options.joinRate,
            "hold_seconds": holdSeconds, "fill_seconds": fillSeconds,
            "joined": s.progress.joined.load(ordering: .relaxed), "failed": s.progress.failed.load(ordering: .relaxed),
            "errors": s.errors, "connects_behind_max": s.connectsBehind, "closed_cleanly": s.closedCleanly,
            "server_cpu_fill_cores": cores(s.serverAtFillStart, s.serverAtFillEnd, fillSeconds) as Any,
            "server_cpu_hold_cores": cores(s.serverAtFillEnd, s.serverAtHoldEnd, holdSeconds) as Any,
            "server_peak_rss_fill_mib": Double(peakFillRSSKiB) / 1024, "server_peak_rss_mib": Double(peakRSSKiB) / 1024,
            "listener_fill_bytes_per_s": fillRate(\.bytesInFill),
            "listener_fill_presence_bytes_per_s": fillRate(\.presenceBytesInFill),
            "steady_window_seconds": steadySeconds,
            "listener_steady_bytes_per_s": steadyRate(\.steadyBytes),
            "listener_steady_presence_bytes_per_s": steadyRate(\.steadyPresenceBytes),
            "listener_hold_bytes_per_s": holdRate { $0.bytesAfterJoin - $0.bytesInFill },
            "listener_hold_presence_bytes_per_s": holdRate { $0.presenceBytesAfterJoin - $0.presenceBytesInFill },
            "moderator_join_latency": RunReport.percentiles(s.moderatorJoinLatency),
            "moderator_joins_expected": options.clients - 1,
            "role_change": changes(s.roleChanges, holdEnd: s.holdEnd), "speaking_change": changes(s.speakingChanges, holdEnd: s.holdEnd),
            "generator_cpu_cores": generatorCPU / max(fillSeconds + holdSeconds, 0.001),
            "machine_steal_cores": machine.steal / max(fillSeconds + holdSeconds, 0.001),
            "machine_busy_cores": machine.busy / max(fillSeconds + holdSeconds, 0.001),
        ]
    }

    /// Every change's latencies pooled; and, for the changes sent once everyone was in, the smallest share of the
    /// room that received one (1.0: every change reached everyone). A change sent in the hold's last second is left
    /// out of both: the clients start closing before it could reach them all.
    private func changes(_ list: [AudienceScenario.Change], holdEnd: Int64) -> [String: Any] {
        let list = list.filter { $0.sentAt + 1_000_000_000 <= holdEnd }
        let afterFill = list.filter(\.afterFill)
        let coverage = afterFill.map { Double($0.received) / Double(max(1, $0.joinedWhenSent)) }.min()
        var result: [String: Any] = ["sent": list.count, "sent_after_fill": afterFill.count]
        result["latency"] = RunReport.percentiles(list.flatMap(\.latencies))
        result["latency_after_fill"] = RunReport.percentiles(afterFill.flatMap(\.latencies))
        result["min_coverage_after_fill"] = coverage as Any
        result["received_after_fill"] = afterFill.map(\.received)
        return result
    }

    private func summary(_ values: [Double]) -> [String: Double] {
        guard !values.isEmpty else { return ["count": 0] }
        let sorted = values.sorted()
        func at(_ p: Double) -> Double { sorted[max(0, min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1))] }
        return ["count": Double(sorted.count), "median": at(0.5), "p99": at(0.99), "max": sorted.last!]
    }
}
