import Foundation
import ParlorLoop
import ParlorMedia

/// A browser's side of a peer connection with Parlor's forwarding unit, built from ParlorMedia's pieces over a real
/// UDP socket: a Chromium-shaped offer (microphone m-line, then receive slots), ICE checks with the answer's
/// credentials (controlling, USE-CANDIDATE, repeated until answered, as a browser does), the DTLS client role,
/// and SRTP both ways. It sends RTP with the RFC 6464 audio level and records every packet it receives, decrypted.
final class MediaTestClient: @unchecked Sendable {  // socket, DTLS and SRTP are touched only on `loop`; `condition` guards the rest
    struct Received: Equatable {
        let ssrc: UInt32
        let sequence: UInt16
        let payload: [UInt8]
    }

    let loop: EventLoop
    let certificate: DTLSCertificate
    let ice = ICECredentials.random()
    let slots: Int
    /// Whether the offer's microphone m-line sends (a track is attached); change it and offer again to renegotiate.
    var sends: Bool {
        get { condition.withLock { sending } }
        set { condition.withLock { sending = newValue } }
    }
    private var sending: Bool
    let ssrc = UInt32.random(in: 1...UInt32.max)

    private var socket: UDPSocket?
    private var dtls: DTLSTransport?
    private var outbound: SRTPSession?
    private var inbound: SRTPSession?
    private var server: TransportAddress?
    private var serverICE: ICECredentials?
    private var checking = false
    private var sequence: UInt16 = 1
    private var timestamp: UInt32 = 0
    private var streaming: (payload: [UInt8], level: UInt8)?

    private let condition = NSCondition()
    private var packets: [Received] = []
    private var isConnected = false
    private var failure: String?

    init(loop: EventLoop, slots: Int = 3, sends: Bool = true) throws {
        self.loop = loop
        self.slots = slots
        sending = sends
        certificate = try DTLSCertificate(commonName: "browser")
    }

    /// The offer, shaped like Chromium's (Tests/ParlorMediaTests/ChromiumOffer.swift): BUNDLE, rtcp-mux, Opus 111,
    /// the audio-level extension as id 1 among the others Chromium offers.
    var offer: String {
        let mids = (0...slots).map(String.init)
        var lines = ["v=0", "o=- 5001175385494079587 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE " + mids.joined(separator: " "),
                     "a=extmap-allow-mixed", "a=msid-semantic: WMS mic"]
        for mid in mids {
            lines += ["m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
                      "a=ice-ufrag:\(ice.usernameFragment)", "a=ice-pwd:\(ice.password)", "a=ice-options:trickle",
                      "a=fingerprint:\(certificate.fingerprint.sdpValue)", "a=setup:actpass", "a=mid:\(mid)",
                      "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
                      "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
                      "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
                      "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid"]
            let microphone = mid == "0"
            lines.append(microphone ? (sends ? "a=sendonly" : "a=inactive") : "a=recvonly")
            if microphone, sends { lines.append("a=msid:mic track") }
            lines += ["a=rtcp-mux", "a=rtcp-rsize", "a=rtpmap:111 opus/48000/2", "a=rtcp-fb:111 transport-cc",
                      "a=fmtp:111 minptime=10;useinbandfec=1", "a=rtpmap:63 red/48000/2", "a=fmtp:63 111/111", "a=rtpmap:9 G722/8000",
                      "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000", "a=rtpmap:13 CN/8000", "a=rtpmap:110 telephone-event/48000",
                      "a=rtpmap:126 telephone-event/8000"]
            if microphone, sends { lines += ["a=ssrc:\(ssrc) cname:browser", "a=ssrc:\(ssrc) msid:mic track"] }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Applies the server's answer: checks connectivity with its credentials at its first host candidate, then runs
    /// the DTLS handshake; returns once SRTP is keyed (throws after 10 s without).
    func connect(answer text: String) throws {
        let answer = try SessionDescription(parsing: text)
        guard let remoteICE = answer.remoteICE, let fingerprint = answer.remoteFingerprint else { throw TestFailure("answer lacks ICE or fingerprint") }
        guard let candidate = text.split(separator: "\r\n").first(where: { $0.hasPrefix("a=candidate:") }) else {
            throw TestFailure("answer has no candidate")
        }
        let fields = candidate.split(separator: " ")
        guard fields.count >= 8, let port = UInt16(fields[5]), let address = TransportAddress(host: String(fields[4]), port: port) else {
            throw TestFailure("unreadable candidate \(candidate)")
        }
        let local = try require_(TransportAddress(host: "127.0.0.1", port: 0))
        try onLoop { [self] in
            let socket = try UDPSocket(loop: loop, bindingTo: local) { [weak self] datagram, source in self?.receive(datagram, from: source) }
            self.socket = socket
            dtls = try DTLSTransport(context: DTLSContext(role: .client, certificate: certificate), expectedRemoteFingerprint: fingerprint)
            server = address
            serverICE = remoteICE
            checking = true
            try socket.start()
            check()
        }
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while !isConnected, failure == nil, condition.wait(until: deadline) {}
        if let failure { throw TestFailure(failure) }
        guard isConnected else { throw TestFailure("no DTLS connection with the media server within 10 s") }
    }

    /// One RTP packet with `payload` and the audio level `level` (−dBov; 127 is silence), protected and sent.
    func send(_ payload: [UInt8], level: UInt8 = 127) throws {
        try onLoop { [self] in try sendPacket(payload, level: level) }
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
            socket?.close()
        }
    }

    // MARK: Loop thread

    private func check() {
        guard checking, let socket, let server, let serverICE else { return }
        let request = STUNMessage(type: .bindingRequest, transactionID: (0..<12).map { _ in UInt8.random(in: 0...255) },
                                  attributes: [.username("\(serverICE.usernameFragment):\(ice.usernameFragment)"), .priority(2_130_706_431),
                                               .iceControlling(tieBreaker: UInt64.random(in: 0...UInt64.max)), .useCandidate])
        socket.send([UDPDatagram(bytes: request.serialized(integrityKey: Array(serverICE.password.utf8), fingerprint: true), destination: server)])
        loop.schedule(after: .milliseconds(50)) { [weak self] in self?.check() }
    }

    private func receive(_ datagram: [UInt8], from source: TransportAddress) {
        guard source == server, let socket, let dtls else { return }
        switch MediaPacketKind(datagram) {
        case .stun:
            guard checking, let response = try? STUNMessage(parsing: datagram), response.type == .bindingSuccess else { return }
            checking = false
            guard let hello = try? dtls.start(now: MonotonicClock.now()) else { return fail("DTLS would not start") }
            socket.send(hello.map { UDPDatagram(bytes: $0, destination: source) })
            retransmit()
        case .dtls:
            let wasConnected = dtls.isConnected
            do {
                socket.send(try dtls.handle(datagram, now: MonotonicClock.now()).map { UDPDatagram(bytes: $0, destination: source) })
                guard dtls.isConnected, !wasConnected else { return }
                let keys = try dtls.keyingMaterial().makeSessions()
                outbound = keys.outbound
                inbound = keys.inbound
                condition.lock()
                isConnected = true
                condition.broadcast()
                condition.unlock()
            } catch {
                fail("DTLS failed: \(error)")
            }
        case .rtp:
            guard let inbound, !MediaPacketKind.isRTCP(datagram) else { return }
            var packet = datagram
            guard (try? inbound.unprotectRTP(&packet)) != nil, let header = try? RTPHeader(parsing: packet) else { return }
            condition.lock()
            packets.append(Received(ssrc: header.ssrc, sequence: header.sequenceNumber, payload: Array(packet[header.payloadRange])))
            condition.broadcast()
            condition.unlock()
        case .unknown:
            return
        }
    }

    private func retransmit() {
        guard let dtls, !dtls.isConnected, dtls.state == .handshaking else { return }
        if let deadline = dtls.retransmissionDeadline, MonotonicClock.now() >= deadline, let server {
            socket?.send(dtls.handleTimeout(now: MonotonicClock.now()).map { UDPDatagram(bytes: $0, destination: server) })
        }
        loop.schedule(after: .milliseconds(20)) { [weak self] in self?.retransmit() }
    }

    private func sendPacket(_ payload: [UInt8], level: UInt8) throws {
        guard let outbound, let socket, let server else { throw TestFailure("not connected") }
        // Version 2 with a one-byte header extension (0xBEDE) holding the audio level as id 1, then the payload.
        var packet: [UInt8] = [0x90, 111, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        packet += withUnsafeBytes(of: timestamp.bigEndian, Array.init) + withUnsafeBytes(of: ssrc.bigEndian, Array.init)
        packet += [0xBE, 0xDE, 0x00, 0x01, 0x10, 0x80 | (level & 0x7F), 0x00, 0x00]
        packet += payload
        sequence &+= 1
        timestamp &+= 960
        try outbound.protectRTP(&packet)
        socket.send([UDPDatagram(bytes: packet, destination: server)])
    }

    private func streamTick() {
        guard let streaming else { return }
        try? sendPacket(streaming.payload, level: streaming.level)
        loop.schedule(after: .milliseconds(20)) { [weak self] in self?.streamTick() }
    }

    private func fail(_ reason: String) {
        condition.lock()
        failure = reason
        condition.broadcast()
        condition.unlock()
    }

    private func onLoop(_ body: @escaping @Sendable () throws -> Void) throws {
        let result: Result<Void, any Error> = loop.submitAndWait { Result { try body() } }
        try result.get()
    }
}

/// `#require` for a throwing context outside a test function's macro expansion.
private func require_<T>(_ value: T?) throws -> T {
    guard let value else { throw TestFailure("required value was nil") }
    return value
}
