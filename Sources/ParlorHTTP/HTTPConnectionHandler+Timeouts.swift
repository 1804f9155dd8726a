import ParlorLoop
import ParlorProtocol

// The header, body and keep-alive idle timeouts: one timer per connection, re-armed lazily, which checks the deadline
// that applies when it fires.
extension HTTPConnectionHandler {
    func currentDeadline() -> UInt64? {
        if inFlight != nil { return nil }
        if let bodyStartedAt { return bodyStartedAt + context.configuration.bodyTimeout.nanoseconds }
        if let headStartedAt { return headStartedAt + context.configuration.headerTimeout.nanoseconds }
        return lastActivity + context.configuration.idleTimeout.nanoseconds
    }

    /// Schedules the timer for the deadline that applies now, unless it is already due to fire no later than that.
    func armTimer() {
        guard let deadline = currentDeadline() else { return }
        if let timer {
            guard deadline < timerDeadline else { return }
            connection.loop.cancelTimer(timer)
        }
        let now = MonotonicClock.now()
        timerDeadline = deadline
        timer = connection.loop.schedule(after: TimeSpan(nanoseconds: deadline > now ? deadline - now : 0)) { [weak self] in
            self?.timerFired()
        }
    }

    private func timerFired() {
        timer = nil
        guard connection.isOpen, !upgraded else { return }
        if parser.isInsideHead, headStartedAt == nil { headStartedAt = lastActivity }
        guard let deadline = currentDeadline() else { return }
        if MonotonicClock.now() >= deadline {
            if bodyStartedAt != nil {
                context.logger.info("body timeout", ["peer": connection.peer])
                bodyStartedAt = nil
                failAndClose(HTTPError(.httpBodyTimeout, title: "Request timeout",
                                       detail: "the request body did not arrive in time"))
                return
            }
            if headStartedAt != nil {
                context.logger.info("header timeout", ["peer": connection.peer])
            }
            connection.close()
            return
        }
        armTimer()
    }
}
