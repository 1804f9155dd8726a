/// One measured window of the ramp.
struct StepResult: Codable {
    var listeners: Int
    var speakers: Int
    var windowSeconds: Double
    var forwardedPerSecond: Double
    var delivery: Delivery
    var latency: Latency
    var cpu: CPUShares
    var foreignPackets: Int
    var wsClosedByServer: Int
    /// With --live-listeners: the live stream's listeners in the window.
    var live: Live?
    /// Packets the speakers sent in the window (ticks × speakers): the divisor of CPU per speaker packet.
    var speakerPackets: Int?
    /// Parlor: each node (one without several --url)'s CPU, and its listeners' delivery and latency.
    var nodes: [NodeShare]?

    /// One node of a cluster in the window.
    struct NodeShare: Codable {
        var node: Int
        var pid: Int32
        var listeners: Int
        /// The whole process in cores: by clock ticks (/proc/PID/stat), and by its threads' schedstat nanoseconds.
        var serverCores: Double
        var runtimeCores: Double
        /// Its parlor-media* threads (media workers, media link threads) by schedstat, in cores.
        var mediaRuntimeCores: Double
        /// Each thread that ran in the window, as "name/tid" (names are cut at 15 bytes), in cores by schedstat.
        var threadCores: [String: Double]
        var lossPercent: Double
        var latency: Latency
    }

    struct Live: Codable {
        var listeners: Int
        /// Body bytes all listeners read per second (64 kbit/s each is 8,000).
        var bytesPerSecond: Double
        /// Listeners whose stream the server ended so far (cut off as slow readers, or the room closed): 0 expected.
        var closedByServer: Int
    }

    /// What reached the listeners in the window, against what the speakers sent them.
    struct Delivery: Codable {
        /// Packets each listener should have received in the window (speakers × ticks).
        var expectedPerListener: Int
        var delivered: Int
        var speakerDelivered: Int
        var lossPercent: Double
        var worstListenerLossPercent: Double
        var listenersOver1Percent: Int
    }

    /// Send-to-arrival latency of the listeners' packets in the window (nil: none arrived).
    struct Latency: Codable {
        var p50Milliseconds: Double?
        var p95Milliseconds: Double?
        var p99Milliseconds: Double?
        var p999Milliseconds: Double?
        var maxMilliseconds: Double?
    }

    /// CPU in the window as fractions of one core (the server's busiest thread, the media thread, and the whole
    /// server), and per forwarded packet.
    struct CPUShares: Codable {
        var mediaThreadCores: Double?
        /// The recordings' track threads (`parlor-record`), when the room is recorded; part of `serverCores`.
        var recorderThreadCores: Double?
        /// The recordings' mix threads (`parlor-mix`: a decode per speaker, an encode every 20 ms); part of `serverCores`.
        var mixThreadCores: Double?
        /// The live mix's thread (`parlor-live`), with --live-listeners; part of `serverCores`.
        var liveThreadCores: Double?
        /// The HTTP/WebSocket event loops' threads (`parlor-loop-N`): where the live stream's writes are.
        var loopThreadCores: Double?
        var serverCores: Double
        var mediaMicrosecondsPerPacket: Double?
        var serverMicrosecondsPerPacket: Double
        var generatorCores: Double
        var otherCores: Double
    }
}

struct RunResult: Codable {
    var label: String
    var speakers: Int
    var payloadBytes: Int
    var srtpProfile: String
    var steps: [StepResult]
    var floor: FloorResult?
    var stoppedEarly: String?
}
