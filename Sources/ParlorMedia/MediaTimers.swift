import ParlorLoop

/// The tick and the report timer of a media loop (the receive loop, and each worker): they run only while the loop
/// has sessions, so an idle one never wakes for them. Confined to `loop`.
protocol MediaTimers: AnyObject {
    var loop: EventLoop { get }
    var configuration: MediaServerConfiguration { get }
    var tickTimer: TimerID? { get set }
    var reportTimer: TimerID? { get set }
    func tick()
    func report()
}

extension MediaTimers {
    /// Starts the tick and the report when the first session opens.
    func startTimersIfStopped() {
        loop.assertInLoop()
        if tickTimer == nil { armTick() }
        if reportTimer == nil { armReport() }
    }

    func armTick() {
        tickTimer = loop.schedule(after: configuration.tickInterval) { [weak self] in self?.tick() }
    }

    func armReport() {
        reportTimer = loop.schedule(after: configuration.reportInterval) { [weak self] in self?.report() }
    }

    func cancelTimers() {
        if let tickTimer { loop.cancelTimer(tickTimer) }
        if let reportTimer { loop.cancelTimer(reportTimer) }
        tickTimer = nil
        reportTimer = nil
    }
}
