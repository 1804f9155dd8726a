/// One measured window of the ramp.
struct StepResult: Codable {
    var listeners: Int
    var speakers: Int
    var windowSeconds: Double
    /// Packets each listener should have received in the window (speakers × ticks).
    var expectedPerListener: Int
    var delivered: Int
    var speakerDelivered: Int
    var lossPercent: Double
    var worstListenerLossPercent: Double
    var listenersOver1Percent: Int
    var p50Milliseconds: Double?
    var p99Milliseconds: Double?
    var p999Milliseconds: Double?
    var maxMilliseconds: Double?
    var forwardedPerSecond: Double
    /// CPU in the window: the server's media thread and the whole server, as fractions of one core.
    var mediaThreadCores: Double?
    var serverCores: Double
    var mediaMicrosecondsPerPacket: Double?
    var serverMicrosecondsPerPacket: Double
    var generatorCores: Double
    var otherCores: Double
    var foreignPackets: Int
    var wsClosedByServer: Int
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
