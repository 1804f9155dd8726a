import Foundation
import ParlorLoop
import ParlorMedia
import ParlorMediaClient
import ParlorSRTP

/// A browser's side of a peer connection with Parlor's forwarding unit: ParlorMediaClient's `MediaPeer` (a
/// Chromium-shaped offer, ICE checks, the OpenSSL DTLS client role, SRTP over real UDP) with blocking waits for
/// tests. It sends RTP with the RFC 6464 audio level and records every packet it receives, decrypted.
final class MediaTestClient: @unchecked Sendable {  // `peer` and `streaming` are touched only on `loop`; `condition` guards the rest
    struct Received: Equatable {
        let ssrc: UInt32
        let sequence: UInt16
        let payload: [UInt8]
    }

    let loop: EventLoop
    let slots: Int
    private let peer: MediaPeer
    var certificate: DTLSCertificate { peer.certificate }
    var ice: ICECredentials { peer.ice }
    var ssrc: UInt32 { peer.ssrc }
    /// Whether the offer's microphone m-line sends (a track is attached); change it and offer again to renegotiate.
    var sends: Bool {
        get { condition.withLock { sending } }
        set { condition.withLock { sending = newValue } }
    }
    private var sending: Bool
    private var streaming: (payload: [UInt8], level: UInt8)?

    private let condition = NSCondition()
    private var packets: [Received] = []
    private var isConnected = false
    private var negotiatedProfile: SRTPProtectionProfile?
    private var failure: String?

    /// The SRTP profile DTLS agreed with the server (nil before `connect` returned).
    var profile: SRTPProtectionProfile? { condition.withLock { negotiatedProfile } }

    init(loop: EventLoop, slots: Int = 3, sends: Bool = true) throws {
        self.loop = loop
        self.slots = slots
        sending = sends
        peer = try MediaPeer(loop: loop)
        peer.connected = { [weak self] in
            guard let self else { return }
            let profile = peer.profile  // on the loop thread, where `peer` lives
            update {
                $0.isConnected = true
                $0.negotiatedProfile = profile
            }
        }
        peer.failed = { [weak self] reason in self?.update { $0.failure = reason } }
        peer.received = { [weak self] header, packet in
            self?.update { $0.packets.append(Received(ssrc: header.ssrc, sequence: header.sequenceNumber, payload: Array(packet[header.payloadRange]))) }
        }
    }

    var offer: String { peer.offer(slots: slots, sends: sends) }

    /// Applies the server's answer: checks connectivity with its credentials at its first host candidate, then runs
    /// the DTLS handshake; returns once SRTP is keyed (throws after 10 s without).
    func connect(answer text: String) throws {
        let answer: MediaAnswer
        do { answer = try MediaAnswer(parsing: text) } catch { throw TestFailure("\(error)") }
        try onLoop { [peer] in try peer.connect(to: answer) }
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while !isConnected, failure == nil, condition.wait(until: deadline) {}
        if let failure { throw TestFailure(failure) }
        guard isConnected else { throw TestFailure("no DTLS connection with the media server within 10 s") }
    }

    /// One RTP packet with `payload` and the audio level `level` (−dBov; 127 is silence), protected and sent.
    func send(_ payload: [UInt8], level: UInt8 = 127) throws {
        try onLoop { [peer] in try peer.sendRTP(payload, level: level) }
    }

    /// Sends a packet every 20 ms, like a microphone, until `stopStreaming`.
    func startStreaming(_ payload: [UInt8], level: UInt8) throws {
        try onLoop { [self] in
            let wasStreaming = streaming != nil
            streaming = (payload, level)
            if !wasStreaming { streamTick() }
        }
    }

    func stopStreaming() throws {
        try onLoop { [self] in streaming = nil }
    }

    /// Every packet received so far, in arrival order.
    var received: [Received] {
        condition.lock()
        defer { condition.unlock() }
        return packets
    }

    /// Waits until a received packet satisfies `predicate` (throws after 10 s); returns everything received by then.
    @discardableResult
    func waitForPacket(where predicate: (Received) -> Bool) throws -> [Received] {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while !packets.contains(where: predicate), condition.wait(until: deadline) {}
        guard packets.contains(where: predicate) else { throw TestFailure("the expected media packet did not arrive within 10 s") }
        return packets
    }

    func close() {
        _ = try? onLoop { [self] in
            streaming = nil
            peer.close()
        }
    }

    // MARK: Loop thread

    private func streamTick() {
        guard let streaming else { return }
        try? peer.sendRTP(streaming.payload, level: streaming.level)
        _ = loop.schedule(after: .milliseconds(20)) { [weak self] in self?.streamTick() }
    }

    private func update(_ change: (MediaTestClient) -> Void) {
        condition.lock()
        change(self)
        condition.broadcast()
        condition.unlock()
    }

    private func onLoop(_ body: @escaping @Sendable () throws -> Void) throws {
        let result: Result<Void, any Error> = loop.submitAndWait { Result { try body() } }
        try result.get()
    }
}
