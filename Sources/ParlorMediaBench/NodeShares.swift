/// Per node of a cluster run (several --url): its CPU in the window and what its listeners received.
enum NodeShares {
    static func make(pids: [Int32], before: [CPUSample], after: [CPUSample], elapsed: Double, expected: Int, counts: [Int],
                     countNodes: [Int], histograms: [LatencyHistogram]) -> [StepResult.NodeShare] {
        pids.indices.map { node in
            let mine = zip(counts, countNodes).filter { $0.1 == node }.map(\.0)
            let runtime = CPUSample.runtime(before[node], after[node])
            return StepResult.NodeShare(
                node: node, pid: pids[node], listeners: mine.count, serverCores: (after[node].server - before[node].server) / elapsed,
                runtimeCores: runtime.all / elapsed, mediaRuntimeCores: runtime.media / elapsed,
                threadCores: threadCores(before[node], after[node], elapsed: elapsed),
                lossPercent: mine.isEmpty ? 0 : 100 * (1 - Double(mine.reduce(0, +)) / Double(expected * mine.count)),
                latency: histograms[node].latency)
        }
    }

    /// The threads that ran between the samples, by "name/tid", in cores.
    static func threadCores(_ before: CPUSample, _ after: CPUSample, elapsed: Double) -> [String: Double] {
        var cores: [String: Double] = [:]
        for (id, end) in after.runtimes {
            guard let start = before.runtimes[id], end > start else { continue }
            cores["\(after.names[id] ?? "?")/\(id)"] = (end - start) / elapsed
        }
        return cores
    }
}

extension LatencyHistogram {
    /// The step's latency figures (all nil when nothing arrived).
    var latency: StepResult.Latency {
        .init(p50Milliseconds: percentile(0.5), p95Milliseconds: percentile(0.95), p99Milliseconds: percentile(0.99),
              p999Milliseconds: percentile(0.999), maxMilliseconds: total > 0 ? Double(maximum) / 1e6 : nil)
    }
}
