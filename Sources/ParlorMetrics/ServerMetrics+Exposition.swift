#if canImport(Glibc)
import Glibc
#endif

extension ServerMetrics {
    /// The whole exposition, built from the request counts `collectRequests` gathered and the atomics read now.
    public func exposition(requests: [RequestKey: Int]) -> String {
        var out = MetricsText()
        out.family("parlor_connections", "gauge", "Open client connections by kind (http, or websocket once upgraded)")
        out.sample("parlor_connections", httpConnections.load(), labels: [("kind", "http")])
        out.sample("parlor_connections", webSocketConnections.load(), labels: [("kind", "websocket")])
        out.single("parlor_rooms_open", "gauge", "Open rooms", roomsOpen.load())
        out.single("parlor_members_joined", "gauge", "Members JOINED in open rooms, those within their grace period included",
                   membersJoined.load())
        out.single("parlor_rooms_summary_presence", "gauge", "Stage rooms announcing their audience in summary (above --full-presence-limit)",
                   roomsSummaryPresence.load())
        out.single("parlor_audience_updates_total", "counter", "room:audience events handed to WebSocket connections, one per receiver",
                   audienceUpdatesDelivered.load())
        out.single("parlor_events_delivered_total", "counter", "Room events handed to WebSocket connections, one per receiver, replays included",
                   eventsDelivered.load())

        out.family("parlor_requests_total", "counter", "HTTP requests answered, by route pattern, method and status")
        let ordered = requests.sorted { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }
        for (key, count) in ordered {
            out.sample("parlor_requests_total", count, labels: [("route", key.route), ("method", key.method), ("status", String(key.status))])
        }

        histogram(&out, "parlor_join_seconds", "conversation:join from reaching the rooms thread to its reply leaving it", joinSeconds)
        histogram(&out, "parlor_commit_seconds", "One rooms batch transaction, BEGIN IMMEDIATE to COMMIT", commitSeconds)

        out.family("parlor_rate_limited_total", "counter", "Requests, connections and messages refused by a limit")
        for limit in RateLimit.allCases {
            out.sample("parlor_rate_limited_total", rateLimitedCount(limit), labels: [("limit", limit.rawValue)])
        }
        out.single("parlor_webhook_failures_total", "counter", "Webhook delivery attempts that failed (refused, error or timeout)",
                   webhookFailures.load())
        out.single("parlor_webhook_queue_depth", "gauge", "Webhooks waiting in the outbox (this node's rows, one per receiver)",
                   webhookQueueDepth.load())
        out.single("parlor_webhook_oldest_age_seconds", "gauge", "Age of the oldest webhook waiting in the outbox (0 when empty)",
                   Self.age(ofMilliseconds: webhookOldestCreatedAt.load()))
        out.family("parlor_webhook_dropped_total", "counter", "Webhooks not delivered: the outbox was full (oldest dropped) or they failed for --webhook-retry-for")
        out.sample("parlor_webhook_dropped_total", webhookDropped.load(), labels: [("reason", "queue_full")])
        out.sample("parlor_webhook_dropped_total", webhookGaveUp.load(), labels: [("reason", "expired")])
        out.single("parlor_media_sessions", "gauge", "Clients' peer connections with the media server (--media sfu)", mediaSessions.load())
        out.family("parlor_media_packets_total", "counter", "RTP packets on the media port: forwarded (one per subscriber copy) or dropped")
        out.sample("parlor_media_packets_total", mediaPacketsForwarded.load(), labels: [("outcome", "forwarded")])
        out.sample("parlor_media_packets_total", mediaPacketsDropped.load(), labels: [("outcome", "dropped")])
        out.single("parlor_media_stun_unauthenticated_total", "counter", "STUN requests on the media port dropped unanswered: unauthenticated or failing authentication",
                   mediaSTUNUnauthenticated.load())
        out.single("parlor_media_handoffs_total", "counter", "Decrypted RTP packets one media worker handed to another, once per packet and worker with listeners of its speaker",
                   mediaPacketsHandedOff.load())
        out.single("parlor_live_listeners", "gauge", "Listeners of rooms' live streams (GET /rooms/{id}/live.ogg)", liveListeners.load())
        out.single("parlor_live_mixes", "gauge", "Live mixes running on this node: one per room with listeners, however many", liveMixes.load())
        out.single("parlor_stream_bytes_total", "counter", "Body bytes of streamed HTTP responses (live streams, recording downloads) handed to their connections",
                   streamBytes.load())
        out.single("parlor_stream_slow_readers_closed_total", "counter", "Streamed HTTP responses cut off because their client read too slowly",
                   streamSlowReadersClosed.load())

        mediaLink.write(into: &out)

        let process = ProcessStatistics.current()
        // The standard process metrics, each only where this platform reports it.
        let processMetrics: [(name: String, type: String, help: String, value: Double?)] = [
            ("process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds", process.cpuSeconds),
            ("process_resident_memory_bytes", "gauge", "Resident memory size in bytes", process.residentBytes.map(Double.init)),
            ("process_open_fds", "gauge", "Open file descriptors", process.openDescriptors.map(Double.init)),
            ("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds", process.startTimeSeconds),
        ]
        for metric in processMetrics {
            if let value = metric.value { out.single(metric.name, metric.type, metric.help, value) }
        }
        return out.text
    }

    /// Seconds since `milliseconds` (Unix ms) by the wall clock; 0 for 0 (nothing waiting).
    static func age(ofMilliseconds milliseconds: Int) -> Double {
        guard milliseconds > 0 else { return 0 }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return max(0, Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 - Double(milliseconds) / 1000)
    }

    private func histogram(_ out: inout MetricsText, _ name: String, _ help: String, _ histogram: MetricsHistogram) {
        let (cumulative, sum) = histogram.snapshot()
        out.family(name, "histogram", help)
        for (bound, count) in zip(histogram.upperBounds, cumulative) {
            out.sample(name + "_bucket", count, labels: [("le", MetricsText.format(bound))])
        }
        out.sample(name + "_bucket", cumulative.last ?? 0, labels: [("le", "+Inf")])
        out.sample(name + "_sum", sum)
        out.sample(name + "_count", cumulative.last ?? 0)
    }
}
