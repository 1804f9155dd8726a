import ParlorLoop
import ParlorMedia
import ParlorSRTP

/// A browser's side of a peer connection with Parlor's forwarding unit, built from ParlorMedia's pieces over a real
/// UDP socket: a Chromium-shaped offer, ICE checks with the answer's credentials (controlling, USE-CANDIDATE,
/// repeated every 50 ms until answered, as a browser does; then a check every 5 s), answers to the server's own
/// checks (consent, RFC 7675: without them the server sends it no media), the OpenSSL DTLS client role, and SRTP both ways.
/// Shared by the tests (`MediaTestClient`) and the media benchmark (`parlor-media-bench`). After `connect` it
/// belongs to `loop`: every call and callback is on that thread.
public final class MediaPeer: @unchecked Sendable {  // loop-thread state once connecting; other threads reach it through `loop`
    public let loop: EventLoop
    public let certificate: DTLSCertificate
    public let ice = ICECredentials.random()
    public let ssrc = UInt32.random(in: 1...UInt32.max)
    /// Called once SRTP is keyed; `failed` when DTLS cannot complete. Set before `connect`.
    public var connected: (() -> Void)?
    public var failed: ((String) -> Void)?
    /// Every RTP packet received, decrypted: its header and bytes (header included; `header.payloadRange` locates the
    /// payload).
    public var received: ((RTPHeader, [UInt8]) -> Void)?

    private var socket: UDPSocket?
    private var dtls: DTLSTransport?
    private var outbound: SRTPSender?
    private var inbound: SRTPReceiver?
    private var server: TransportAddress?
    private var serverICE: ICECredentials?
    private var checking = false
    private var sequence: UInt16 = 1
    private var timestamp: UInt32 = 0
    public private(set) var isConnected = false
    /// The SRTP profile DTLS negotiated (nil before).
    public private(set) var profile: SRTPProtectionProfile?

    public init(loop: EventLoop, certificate: DTLSCertificate? = nil) throws {
        self.loop = loop
        self.certificate = try certificate ?? DTLSCertificate(commonName: "browser")
    }

    /// Applies the server's answer (`MediaAnswer`, or a server's offer read the same way): binds a socket on
    /// `localHost` (127.0.0.1; a server that leaves loopback out of its candidates needs another of the machine's
    /// addresses), checks connectivity, then runs the DTLS handshake; `connected` is called when SRTP is keyed. Loop thread.
    public func connect(to answer: MediaAnswer, localHost: String = "127.0.0.1") throws {
        loop.assertInLoop()
        guard let local = TransportAddress(host: localHost, port: 0) else { throw MediaClientError("not an address: \(localHost)") }
        let socket = try UDPSocket(loop: loop, bindingTo: local) { [weak self] datagram, source in self?.receive(datagram, from: source) }
        self.socket = socket
        dtls = try DTLSTransport(context: DTLSContext(role: .client, certificate: certificate), expectedRemoteFingerprint: answer.fingerprint)
        server = answer.address
        serverICE = answer.ice
        checking = true
        try socket.start()
        check()
    }

    /// One RTP packet: version 2, payload type 111, a one-byte header extension (0xBEDE) holding the RFC 6464 audio
    /// level `level` (−dBov, 127 silence) as id 1, then `payload`; protected and sent. The next packet's timestamp is
    /// `samples` (48 kHz: what `payload` decodes to) later. Loop thread.
    public func sendRTP(_ payload: [UInt8], level: UInt8 = 127, samples: UInt32 = 960) throws {
        loop.assertInLoop()
        guard let outbound, let socket, let server else { throw MediaClientError("not connected") }
        var packet: [UInt8] = [0x90, 111, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        packet.reserveCapacity(20 + payload.count + SRTPProtectionProfile.largestOverhead)
        packet += withUnsafeBytes(of: timestamp.bigEndian, Array.init) + withUnsafeBytes(of: ssrc.bigEndian, Array.init)
        packet += [0xBE, 0xDE, 0x00, 0x01, 0x10, 0x80 | (level & 0x7F), 0x00, 0x00]
        packet += payload
        sequence &+= 1
        timestamp &+= samples
        try outbound.protectRTP(&packet)
        socket.send([UDPDatagram(bytes: packet, destination: server)])
    }

    /// DTX, as a browser does while its speaker is quiet: sends nothing; the next packet's timestamp is `samples`
    /// later than it would have been, its sequence number the next. Loop thread.
    public func pauseRTP(samples: UInt32) {
        loop.assertInLoop()
        timestamp &+= samples
    }

    /// Closes the socket. Loop thread.
    public func close() {
        loop.assertInLoop()
        checking = false
        socket?.close()
        socket = nil
    }

    // MARK: Loop thread

    private func check() {
        guard checking else { return }
        sendCheck(nominating: true)
        _ = loop.schedule(after: .milliseconds(50)) { [weak self] in self?.check() }
    }

    /// Consent freshness: a check every 5 s while the socket is open (the answers need no handling).
    private func refreshConsent() {
        guard socket != nil else { return }
        sendCheck(nominating: false)
        _ = loop.schedule(after: .seconds(5)) { [weak self] in self?.refreshConsent() }
    }

    private func sendCheck(nominating: Bool) {
        guard let socket, let server, let serverICE else { return }
        var attributes: [STUNAttribute] = [.username("\(serverICE.usernameFragment):\(ice.usernameFragment)"), .priority(2_130_706_431),
                                           .iceControlling(tieBreaker: UInt64.random(in: 0...UInt64.max))]
        if nominating { attributes.append(.useCandidate) }
        let request = STUNMessage(type: .bindingRequest, transactionID: (0..<12).map { _ in UInt8.random(in: 0...255) }, attributes: attributes)
        socket.send([UDPDatagram(bytes: request.serialized(integrityKey: Array(serverICE.password.utf8), fingerprint: true), destination: server)])
    }

    private func receive(_ datagram: [UInt8], from source: TransportAddress) {
        guard source == server, let socket, let dtls else { return }
        switch MediaPacketKind(datagram) {
        case .stun:
            guard let message = try? STUNMessage(parsing: datagram) else { return }
            if message.type == .bindingRequest { return answerCheck(message, datagram, from: source) }
            guard checking, message.type == .bindingSuccess else { return }
            checking = false
            guard let hello = try? dtls.start(now: MonotonicClock.now()) else { return fail("DTLS would not start") }
            socket.send(hello.map { UDPDatagram(bytes: $0, destination: source) })
            retransmit()
            _ = loop.schedule(after: .seconds(5)) { [weak self] in self?.refreshConsent() }
        case .dtls:
            let wasConnected = dtls.isConnected
            do {
                socket.send(try dtls.handle(datagram, now: MonotonicClock.now()).map { UDPDatagram(bytes: $0, destination: source) })
                guard dtls.isConnected, !wasConnected else { return }
                let keys = try dtls.keyingMaterial()
                let contexts = try keys.makeContexts()
                outbound = contexts.sender
                inbound = contexts.receiver
                profile = keys.profile
                isConnected = true
                connected?()
            } catch {
                fail("DTLS failed: \(error)")
            }
        case .rtp:
            guard let inbound, !MediaPacketKind.isRTCP(datagram) else { return }
            var packet = datagram
            guard (try? inbound.unprotectRTP(&packet)) != nil, let header = try? RTPHeader(parsing: packet) else { return }
            received?(header, packet)
        case .unknown:
            return
        }
    }

    /// The server's own checks (consent, RFC 7675): it forwards media to us only once we answered one, as a
    /// browser does. USERNAME must be `ours:theirs` and MESSAGE-INTEGRITY under our password.
    private func answerCheck(_ request: STUNMessage, _ datagram: [UInt8], from source: TransportAddress) {
        guard let socket, let serverICE, request.username == "\(ice.usernameFragment):\(serverICE.usernameFragment)",
              request.hasValidFingerprint(in: datagram), request.hasValidIntegrity(in: datagram, key: Array(ice.password.utf8)) else { return }
        let response = STUNMessage(type: .bindingSuccess, transactionID: request.transactionID, attributes: [.xorMappedAddress(source)])
        socket.send([UDPDatagram(bytes: response.serialized(integrityKey: Array(ice.password.utf8), fingerprint: true), destination: source)])
    }

    private func retransmit() {
        guard let dtls, !dtls.isConnected, dtls.state == .handshaking else { return }
        if let deadline = dtls.retransmissionDeadline, MonotonicClock.now() >= deadline, let server {
            socket?.send(dtls.handleTimeout(now: MonotonicClock.now()).map { UDPDatagram(bytes: $0, destination: server) })
        }
        _ = loop.schedule(after: .milliseconds(20)) { [weak self] in self?.retransmit() }
    }

    private func fail(_ reason: String) { failed?(reason) }
}

/// What the load client and the tests report: a sentence.
public struct MediaClientError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
