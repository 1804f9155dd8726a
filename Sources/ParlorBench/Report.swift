#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What a run measured, and its two renderings: the JSON object bench/report.py reads (`--json`) and the text table.
struct RunReport {
    var options: Options
    var runTag: String
    var generatorThreads: Int
    var authSeconds: Double
    var roomsSeconds: Double
    var rampSeconds: Double
    var joinedAfterRamp: Int
    var windowSeconds: Double
    var heldAtEnd: Int
    /// Int.max when the window never sampled the open count.
    var minimumOpen: Int
    var joinedAtEnd: Int
    var stats: WorkerStats
    /// CPU seconds during the window: this process, and the whole machine.
    var ownCPU: Double
    var machine: MachineSample
    var serverBefore: ProcessSample?
    var serverAfter: ProcessSample?
    /// After the clients closed: its peak RSS then is the run's.
    var serverFinal: ProcessSample?
    var peakServerRSSKiB: Int
    var wallSeconds: Double
    /// Wall-clock start of the window (seconds since 1970), to line up several generator processes' windows.
    var windowStartUnix: Double = 0

    var errorCount: Int { stats.errors.values.reduce(0, +) }
    private var serverCPU: Double { (serverAfter?.cpuSeconds ?? 0) - (serverBefore?.cpuSeconds ?? 0) }
    private var machineCPU: Double { machine.busy }
    private var otherProcessesCPU: Double { max(0, machineCPU - ownCPU - serverCPU) }
    private var coreCount: Double { Double(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
    private var heldMinimum: Int { minimumOpen == Int.max ? heldAtEnd : minimumOpen }

    static func percentiles(_ samples: [Int64]) -> [String: Double] {
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
    func timeline() -> [[String: Double]] {
        var buckets: [Int: [Int64]] = [:]
        for (offset, rtt) in zip(stats.joinSentOffset, stats.joinRTT) { buckets[Int(offset / 1_000_000_000), default: []].append(rtt) }
        return buckets.keys.sorted().map { second in
            let values = Self.percentiles(buckets[second]!)
            return ["second": Double(second), "joins": values["count"] ?? 0, "p50_ms": values["p50_ms"] ?? 0,
                    "p99_ms": values["p99_ms"] ?? 0, "max_ms": values["max_ms"] ?? 0]
        }
    }

    func json() -> [String: Any] {
        var report: [String: Any] = [
            "label": options.label,
            "run": runTag,
            "clients": options.clients,
            "rooms": options.rooms,
            "members_per_room": Double(options.clients) / Double(options.rooms),
            "churn_rate_target": options.churnRate,
            "generator_threads": generatorThreads,
            "setup": ["auth_seconds": authSeconds, "auth_per_second": Double(options.clients) / authSeconds,
                      "rooms_seconds": roomsSeconds, "ramp_seconds": rampSeconds, "joined_after_ramp": joinedAfterRamp],
            "window_seconds": windowSeconds,
            "connections_held": heldAtEnd,
            "connections_held_min": heldMinimum,
            "joined_at_end": joinedAtEnd,
            "ops_issued": stats.opsIssued,
            "ops_skipped": stats.opsSkipped,
            "joins_per_second": Double(stats.joinRTT.count) / windowSeconds,
            "join_rtt": Self.percentiles(stats.joinRTT),
            "initial_join_rtt": Self.percentiles(stats.initialJoinRTT),
            "join_timeline": timeline(),
            "fanout": Self.percentiles(stats.fanOut),
            // Several --url: the nodes, how many clients each held, and fan-out split by receiver on the joiner's node
            // or another; the histograms let several generator processes' runs be merged (bench/cluster_report.py).
            "urls": options.endpoints.map(\.url),
            "joined_by_url": stats.joinedByNode,
            "fanout_same_node": Self.percentiles(stats.fanOutSameNode),
            "fanout_cross_node": Self.percentiles(stats.fanOutCrossNode),
            "histograms_us": ["fanout": Histogram.buckets(stats.fanOut), "fanout_same_node": Histogram.buckets(stats.fanOutSameNode),
                              "fanout_cross_node": Histogram.buckets(stats.fanOutCrossNode), "join_rtt": Histogram.buckets(stats.joinRTT),
                              "initial_join_rtt": Histogram.buckets(stats.initialJoinRTT)],
            "window_start_unix": windowStartUnix,
            "events_in_window": stats.eventsInWindow,
            "events_total": stats.eventsTotal,
            "events_per_second": Double(stats.eventsInWindow) / windowSeconds,
            "pings_answered": stats.pingsAnswered,
            "closed_cleanly": stats.closedCleanly,
            "errors": errorCount,
            "error_kinds": stats.errors,
            // CPU used by everything else on the machine during the window: other work competing with the server.
            "machine": ["cores": coreCount, "busy_cpu_seconds": machineCPU,
                        "other_processes_cpu_seconds": otherProcessesCPU,
                        "other_processes_cores": otherProcessesCPU / windowSeconds,
                        "idle_cores": max(0, coreCount - (machineCPU + machine.steal) / windowSeconds),
                        "steal_cpu_seconds": machine.steal, "steal_cores": machine.steal / windowSeconds],
            "generator": ["cpu_seconds": ownCPU, "cpu_percent_of_one_core": ownCPU / windowSeconds * 100,
                          "peak_rss_mib": Double(ownPeakRSSKiB()) / 1024, "wall_seconds": wallSeconds],
        ]
        if let before = serverBefore, let after = serverAfter, let pid = options.serverPID {
            let cpu = after.cpuSeconds - before.cpuSeconds
            report["server"] = [
                "pid": Int(pid),
                "cpu_seconds": cpu,
                "cpu_percent_of_one_core": cpu / windowSeconds * 100,
                "cpu_us_per_event": stats.eventsInWindow > 0 ? cpu / Double(stats.eventsInWindow) * 1e6 : 0,
                "events_per_cpu_second": cpu > 0 ? Double(stats.eventsInWindow) / cpu : 0,
                "rss_mib_window_peak": Double(peakServerRSSKiB) / 1024,
                "peak_rss_mib": Double((serverFinal ?? after).peakRSSKiB) / 1024,
                "threads": after.threads,
            ] as [String: Any]
        }
        return report
    }

    func printJSON() {
        let data = try! JSONSerialization.data(withJSONObject: json(), options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }

    func printText() {
        func ms(_ stats: [String: Double], _ key: String) -> String { String(format: "%.3f", stats[key] ?? 0) }
        let join = Self.percentiles(stats.joinRTT), fan = Self.percentiles(stats.fanOut)
        print("connections held       \(heldAtEnd) (min during window \(heldMinimum))")
        print("joins                  \(stats.joinRTT.count) in \(String(format: "%.1f", windowSeconds)) s (\(String(format: "%.0f", Double(stats.joinRTT.count) / windowSeconds))/s), skipped \(stats.opsSkipped)")
        print("join round trip ms     p50 \(ms(join, "p50_ms"))  p99 \(ms(join, "p99_ms"))  p99.9 \(ms(join, "p999_ms"))  max \(ms(join, "max_ms"))")
        print("fan-out ms             p50 \(ms(fan, "p50_ms"))  p99 \(ms(fan, "p99_ms"))  p99.9 \(ms(fan, "p999_ms"))  (\(stats.fanOut.count) samples)")
        if options.endpoints.count > 1 {
            let cross = Self.percentiles(stats.fanOutCrossNode), same = Self.percentiles(stats.fanOutSameNode)
            print("  cross-node ms        p50 \(ms(cross, "p50_ms"))  p99 \(ms(cross, "p99_ms"))  (\(stats.fanOutCrossNode.count) samples)")
            print("  same-node ms         p50 \(ms(same, "p50_ms"))  p99 \(ms(same, "p99_ms"))  (\(stats.fanOutSameNode.count) samples)")
            print("joined per node        \(stats.joinedByNode.map(String.init).joined(separator: " / "))")
        }
        print("events delivered/s     \(String(format: "%.0f", Double(stats.eventsInWindow) / windowSeconds))")
        print("errors                 \(errorCount) \(stats.errors)")
        let slow = timeline().filter { ($0["max_ms"] ?? 0) > 50 }
            .map { String(format: "%.0fs:%.0fms", $0["second"] ?? 0, $0["max_ms"] ?? 0) }
        if !slow.isEmpty { print("seconds with a join over 50 ms: \(slow.joined(separator: " "))") }
        print("pings answered         \(stats.pingsAnswered)")
        if let server = json()["server"] as? [String: Any] {
            print(String(format: "server CPU             %.2f s (%.0f%% of a core), %.2f µs/event, peak RSS %.1f MiB",
                         server["cpu_seconds"] as! Double, server["cpu_percent_of_one_core"] as! Double,
                         server["cpu_us_per_event"] as! Double, server["peak_rss_mib"] as! Double))
        }
        print(String(format: "generator CPU          %.2f s (%.0f%% of a core)", ownCPU, ownCPU / windowSeconds * 100))
        print(String(format: "other processes        %.2f cores busy beside server and generator; %.2f of %.0f cores idle",
                     otherProcessesCPU / windowSeconds, max(0, coreCount - (machineCPU + machine.steal) / windowSeconds), coreCount))
        print(String(format: "stolen by the host     %.2f cores (steal time of the virtual CPUs)", machine.steal / windowSeconds))
    }
}
