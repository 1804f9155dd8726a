import Foundation
import ParlorSRTP
import ParlorLoop
import Testing
@testable import ParlorMedia

/// The pieces together over real sockets, the way the media server will chain them (docs/media.md, "the packet
/// path"): a client checks connectivity with STUN, runs DTLS with the server through the ICE-validated address, and
/// sends SRTP the server unprotects. Both ends are `UDPSocket`s on 127.0.0.1 on one running loop.
@Suite struct MediaPathTests {
    typealias Inbox = UDPSocketTests.Inbox

    /// The server's side: one session, demultiplexed by first byte and by source address. Loop-confined.
    final class Server: @unchecked Sendable {  // touched only on the loop thread once the sockets run
        var responder = ICELiteResponder()
        let context: DTLSContext
        let clientFingerprint: DTLSFingerprint
        var transport: DTLSTransport?
        var inbound: SRTPReceiver?
        var socket: UDPSocket?
        let events: Inbox

        init(certificate: DTLSCertificate, clientFingerprint: DTLSFingerprint, ice: ICECredentials, events: Inbox) throws {
            context = try DTLSContext(role: .server, certificate: certificate)
            self.clientFingerprint = clientFingerprint
            self.events = events
            responder.addSession(local: ice, remote: ICECredentials(usernameFragment: "brwU", password: "browserpassword012345678"))
        }

        func receive(_ datagram: [UInt8], from source: TransportAddress) {
            guard let socket else { return }
            let now = MonotonicClock.now()
            switch MediaPacketKind(datagram) {
            case .stun:
                let outcome = responder.handle(datagram, from: source, now: now)
                if let response = outcome.response { socket.send([UDPDatagram(bytes: response, destination: source)]) }
            case .dtls:
                guard responder.session(at: source) != nil else { return events.append(Array("dropped dtls".utf8), from: source) }
                do {
                    if transport == nil { transport = try DTLSTransport(context: context, expectedRemoteFingerprint: clientFingerprint) }
                    let replies = try transport!.handle(datagram, from: source, now: now)
                    socket.send(replies.map { UDPDatagram(bytes: $0, destination: source) })
                    if transport!.isConnected, inbound == nil { inbound = try transport!.keyingMaterial().makeContexts().receiver }
                } catch {
                    events.append(Array("dtls error \(error)".utf8), from: source)
                }
            case .rtp:
                guard responder.session(at: source) != nil, let inbound else { return }
                var packet = datagram
                do {
                    try inbound.unprotectRTP(&packet)
                    events.append(packet, from: source)
                } catch {
                    events.append(Array("srtp error \(error)".utf8), from: source)
                }
            case .unknown:
                return
            }
        }
    }

    /// The browser's side, reduced to what the path needs. Loop-confined.
    final class Client: @unchecked Sendable {  // touched only on the loop thread once the sockets run
        let transport: DTLSTransport
        var socket: UDPSocket?
        var server: TransportAddress?
        let events: Inbox

        init(certificate: DTLSCertificate, serverFingerprint: DTLSFingerprint, events: Inbox) throws {
            transport = try DTLSTransport(context: DTLSContext(role: .client, certificate: certificate), expectedRemoteFingerprint: serverFingerprint)
            self.events = events
        }

        func receive(_ datagram: [UInt8], from source: TransportAddress) {
            switch MediaPacketKind(datagram) {
            case .stun:
                events.append(datagram, from: source)
            case .dtls:
                guard let replies = try? transport.handle(datagram, now: MonotonicClock.now()) else { return }
                socket?.send(replies.map { UDPDatagram(bytes: $0, destination: source) })
                if transport.isConnected { events.append(Array("connected".utf8), from: source) }
            default:
                return
            }
        }
    }

    @Test func stunThenDTLSThenSRTPOverTheLoopbackInterface() throws {
        let loop = try EventLoop(name: "media-path")
        loop.start()
        defer {
            loop.stop()
            loop.waitUntilStopped()
        }
        let loopback = try #require(TransportAddress(host: "127.0.0.1", port: 0))
        let serverCertificate = try DTLSCertificate(), clientCertificate = try DTLSCertificate(commonName: "browser")
        let ice = ICECredentials(usernameFragment: "srvU", password: "serverpassword0123456789")
        let serverEvents = Inbox(), clientEvents = Inbox(), strangerEvents = Inbox()
        let server = try Server(certificate: serverCertificate, clientFingerprint: clientCertificate.fingerprint, ice: ice, events: serverEvents)
        let client = try Client(certificate: clientCertificate, serverFingerprint: serverCertificate.fingerprint, events: clientEvents)
        let serverSocket = try UDPSocket(loop: loop, bindingTo: loopback) { server.receive($0, from: $1) }
        let clientSocket = try UDPSocket(loop: loop, bindingTo: loopback) { client.receive($0, from: $1) }
        let strangerSocket = try UDPSocket(loop: loop, bindingTo: loopback) { strangerEvents.append($0, from: $1) }
        server.socket = serverSocket
        client.socket = clientSocket
        let sockets = UDPSocketTests.Sockets(a: serverSocket, b: clientSocket)
        let stranger = UDPSocketTests.Sockets(a: strangerSocket, b: strangerSocket)
        try UDPSocketTests.onLoop(loop) {
            try sockets.a.start()
            try sockets.b.start()
            try stranger.a.start()
        }
        defer { _ = try? UDPSocketTests.onLoop(loop) { sockets.a.close(); sockets.b.close(); stranger.a.close() } }
        let serverAddress = serverSocket.localAddress

        // 1. A connectivity check with USE-CANDIDATE; the success response maps the client's address.
        let check = ICELiteResponderTests.check(username: "srvU:brwU", password: ice.password, useCandidate: true)
        try UDPSocketTests.onLoop(loop) { sockets.b.send([UDPDatagram(bytes: check, destination: serverAddress)]) }
        let response = try STUNMessage(parsing: try #require(clientEvents.wait(for: 1).first).bytes)
        #expect(response.type == .bindingSuccess)
        #expect(response.xorMappedAddress == sockets.b.localAddress)

        // 2. DTLS from an address that never checked is dropped; from the client's it completes.
        let strangerHello = try DTLSTransport(context: DTLSContext(role: .client, certificate: clientCertificate),
                                              expectedRemoteFingerprint: nil).start(now: 0)
        try UDPSocketTests.onLoop(loop) { stranger.a.send(strangerHello.map { UDPDatagram(bytes: $0, destination: serverAddress) }) }
        #expect(String(decoding: serverEvents.wait(for: 1)[0].bytes, as: UTF8.self) == "dropped dtls")
        try UDPSocketTests.onLoop(loop) {
            let hello = try client.transport.start(now: MonotonicClock.now())
            sockets.b.send(hello.map { UDPDatagram(bytes: $0, destination: serverAddress) })
        }
        #expect(String(decoding: clientEvents.wait(for: 2)[1].bytes, as: UTF8.self) == "connected")

        // 3. SRTP keyed from the handshake: the server unprotects what the client protected.
        let plain = SRTPContextTests.rtpPacket(sequence: 1)
        try UDPSocketTests.onLoop(loop) {
            let outbound = try client.transport.keyingMaterial().makeContexts().sender
            var packet = plain
            try outbound.protectRTP(&packet)
            sockets.b.send([UDPDatagram(bytes: packet, destination: serverAddress)])
        }
        let received = serverEvents.wait(for: 2)
        #expect(received.count == 2 && received[1].bytes == plain)
        #expect(received.count == 2 && received[1].source == sockets.b.localAddress)
        #expect(strangerEvents.wait(for: 0).isEmpty)
    }
}
