import Foundation

/// The human-readable form of a run.
enum Report {
    static func ms(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "–" }

    static func row(_ step: StepResult) -> String {
        String(format: "N=%d S=%d: loss %.3f %% (worst listener %.2f %%, %d over 1 %%), p50 %@ ms p99 %@ ms max %@ ms, "
               + "%.0f pkt/s, media thread %@ core = %@ µs/pkt (server %.2f core, %.2f µs/pkt), generator %.2f, others %.2f cores",
               step.listeners, step.speakers, step.delivery.lossPercent, step.delivery.worstListenerLossPercent, step.delivery.listenersOver1Percent,
               ms(step.latency.p50Milliseconds), ms(step.latency.p99Milliseconds), ms(step.latency.maxMilliseconds), step.forwardedPerSecond,
               step.cpu.mediaThreadCores.map { String(format: "%.2f", $0) } ?? "?", step.cpu.mediaMicrosecondsPerPacket.map { String(format: "%.2f", $0) } ?? "?",
               step.cpu.serverCores, step.cpu.serverMicrosecondsPerPacket, step.cpu.generatorCores, step.cpu.otherCores)
            + (step.cpu.recorderThreadCores.map { String(format: "; recorder threads %.3f core", $0) } ?? "")
            + (step.cpu.mixThreadCores.map { String(format: "; mix threads %.3f core", $0) } ?? "")
            + (step.live.map { String(format: "; %d live listeners read %.0f B/s (%d closed), live mix %.3f core, loops %.3f core", $0.listeners,
                                      $0.bytesPerSecond, $0.closedByServer, step.cpu.liveThreadCores ?? 0, step.cpu.loopThreadCores ?? 0) } ?? "")
    }

    static func table(_ run: RunResult) -> String {
        let floor = run.floor.map { $0.udpMicroseconds + $0.srtpMicroseconds }
        var lines = ["\(run.label): \(run.speakers) speaker(s), \(run.payloadBytes)-byte payloads, SRTP \(run.srtpProfile)",
                     "| listeners | pkt/s forwarded | loss | worst listener | p50 / p99 / max ms | media thread | µs/pkt | × (floor+SRTP) | generator | others |",
                     "|---|---|---|---|---|---|---|---|---|---|"]
        for step in run.steps {
            var multiple = "–"
            if let cost = step.cpu.mediaMicrosecondsPerPacket, let floor { multiple = String(format: "%.2f×", cost / floor) }
            lines.append(String(format: "| %d | %.0f | %.3f %% | %.2f %% | %@ / %@ / %@ | %@ core | %@ | %@ | %.2f | %.2f |", step.listeners,
                                step.forwardedPerSecond, step.delivery.lossPercent, step.delivery.worstListenerLossPercent, ms(step.latency.p50Milliseconds),
                                ms(step.latency.p99Milliseconds), ms(step.latency.maxMilliseconds),
                                step.cpu.mediaThreadCores.map { String(format: "%.2f", $0) } ?? "?",
                                step.cpu.mediaMicrosecondsPerPacket.map { String(format: "%.2f", $0) } ?? "?", multiple, step.cpu.generatorCores, step.cpu.otherCores))
        }
        let recorded = run.steps.compactMap { step in step.cpu.recorderThreadCores.map { (step.listeners, $0, step.cpu.mixThreadCores ?? 0) } }
        if !recorded.isEmpty {
            lines.append("recording (parts of the server's CPU: the tracks' parlor-record threads, the mix's parlor-mix threads): "
                         + recorded.map { String(format: "%d listeners %.3f + %.3f core", $0.0, $0.1, $0.2) }.joined(separator: ", "))
        }
        if let f = run.floor {
            lines.append(String(format: "floor: %.2f µs per %d-byte sendmmsg datagram (%d sent) + %.2f µs per SRTP protect (%@, %d) = %.2f µs",
                                f.udpMicroseconds, f.datagramBytes, f.udpDatagrams, f.srtpMicroseconds, f.srtpProfile, f.srtpPackets,
                                f.udpMicroseconds + f.srtpMicroseconds))
        }
        if let stopped = run.stoppedEarly { lines.append("stopped: \(stopped)") }
        return lines.joined(separator: "\n")
    }
}
