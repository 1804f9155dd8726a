import ParlorLoop
import ParlorMedia
import ParlorMediaClient

/// The speakers' loop: every 20 ms (tick k at start + k × 20 ms, catching up if the loop was late) each speaker
/// sends one packet whose payload carries its index, k and the send time. Paused while listeners join (their DTLS
/// handshakes then have the media thread to themselves, which keeps the setup of a large room short); the ticks go
/// on from where they stopped.
final class SpeakerClock: @unchecked Sendable {  // `speakers` and the schedule are touched only on `loop`; `tick` is locked
    let loop: EventLoop
    let payloadBytes: Int
    private var speakers: [MediaPeer] = []
    private var start: UInt64 = 0
    private var next: UInt32 = 0
    private var paused = false
    private let sent = Locked<UInt32>(0)
    private(set) var sendErrors = 0
    /// Forwarded packets the speakers received from each other inside the window (8-speaker rooms).
    private var window: Range<UInt32> = 0..<0
    private var receivedInWindow = 0
    private var arrivals = 0
    static let interval: UInt64 = 20_000_000

    init(payloadBytes: Int) throws {
        self.payloadBytes = payloadBytes
        loop = try EventLoop(name: "media-bench-speakers")
        loop.start()
    }

    /// Ticks sent so far (any thread).
    var tick: UInt32 { sent.withLock { $0 } }

    /// Adds a speaker (loop thread); the first one starts the clock.
    func add(_ peer: MediaPeer) {
        loop.assertInLoop()
        peer.received = { [unowned self] header, packet in
            guard let payload = ProbePayload(packet, in: header.payloadRange) else { return }
            arrivals += 1
            if window.contains(payload.sequence) { receivedInWindow += 1 }
        }
        speakers.append(peer)
        if speakers.count == 1 {
            start = MonotonicClock.now()
            fire()
        }
    }

    /// Stops or resumes sending (any thread).
    func setPaused(_ pause: Bool) {
        _ = loop.submitAndWait { [self] in
            if paused, !pause { start = MonotonicClock.now() &- UInt64(next) &* Self.interval }  // no burst of missed ticks
            paused = pause
            return true
        }
    }

    private func fire() {
        let now = MonotonicClock.now()
        if paused {
            _ = loop.schedule(after: .milliseconds(20)) { [weak self] in self?.fire() }
            return
        }
        while start &+ UInt64(next) &* Self.interval <= now {
            for (index, speaker) in speakers.enumerated() {
                let payload = ProbePayload(speaker: UInt16(index), sequence: next, sentAt: MonotonicClock.now()).encoded(length: payloadBytes)
                do { try speaker.sendRTP(payload, level: 30) } catch { sendErrors += 1 }
            }
            next += 1
            sent.withLock { $0 = next }
        }
        let due = start &+ UInt64(next) &* Self.interval
        let wait = due > now ? due - now : 0
        _ = loop.schedule(after: TimeSpan(nanoseconds: wait)) { [weak self] in self?.fire() }
    }

    /// Starts counting a new window (any thread).
    func begin(_ window: Range<UInt32>) {
        _ = loop.submitAndWait { [self] in
            self.window = window
            receivedInWindow = 0
            return true
        }
    }

    /// What the speakers received in the window, and send errors so far (any thread).
    func collect() -> (received: Int, sendErrors: Int) { loop.submitAndWait { [self] in (receivedInWindow, sendErrors) } }

    /// Probe packets the speakers received so far (any thread).
    var arrivalCount: Int { loop.submitAndWait { [self] in arrivals } }

    func closeAll() {
        _ = loop.submitAndWait { [self] in
            for peer in speakers { peer.close() }
            speakers.removeAll()
            return true
        }
        loop.stop()
        loop.waitUntilStopped()
    }
}
