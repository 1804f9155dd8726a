import ParlorCodec
import ParlorLoop

/// A resume's replay in pages (issue 34): the rooms thread sends a page and its end; the connection holds what is
/// sent meanwhile behind it, and asks for the next page once this one has drained.
extension WebSocketConnection {
    /// The end of a page of a resume's replay, queued with `sendPaced` before this. `more`: frames sent from now
    /// wait behind the pages to come; else those held go out. With `stallTimeout`, the delegate is told when the
    /// page has drained (`webSocketWantsReplayPage`); a peer that does not read it in time is a slow consumer.
    public func replayPageEnded(more: Bool, stallTimeout: TimeSpan?) {
        connection.loop.assertInLoop()
        guard isOpen else { return }
        if more {
            holdingForReplay = true
        } else if holdingForReplay {
            holdingForReplay = false
            let frames = held
            held = []
            heldBytes = 0
            for frame in frames { send(frame: frame, writeNow: false) }
        }
        guard let stallTimeout else { return }
        replayDrainWanted = true
        if let replayStall { connection.loop.cancelTimer(replayStall) }
        replayStall = connection.loop.schedule(after: stallTimeout) {
            self.replayStall = nil
            guard self.replayDrainWanted else { return }
            self.context.metrics?.rateLimited(.output)
            self.connection.discardUnsentOutput()
            self.close(code: WebSocketCloseCode.policyViolation, reason: "slow consumer: replay not read")
        }
        checkReplayDrained()
    }

    func hold(_ frame: [UInt8]) {
        held.append(frame)
        heldBytes += frame.count
        guard heldBytes > context.configuration.webSocket.maxBacklogBytes else { return }
        connection.discardUnsentOutput()
        context.metrics?.rateLimited(.output)
        close(code: WebSocketCloseCode.policyViolation, reason: "slow consumer: backlog over limit")
    }

    /// Asks for the next replay page once the backlog is out and little output is left (feedBacklog watches the
    /// drains until then).
    func checkReplayDrained() {
        guard replayDrainWanted, isOpen, backlogIsEmpty else { return }
        guard connection.pendingOutputBytes <= Self.replayDrainedBytes else {
            connection.notifyWhenOutputDrains(below: Self.replayDrainedBytes)
            return
        }
        replayDrainWanted = false
        if let replayStall { connection.loop.cancelTimer(replayStall) }
        replayStall = nil
        delegate?.webSocketWantsReplayPage(self)
    }

    static let replayDrainedBytes = 16 * 1024
}
