import ParlorMedia
import ParlorMediaClient
import Testing

/// The media load client's own parsing: the probe payload the bench's speakers send and its listeners read, and
/// the answer fields a client connects with.
@Suite struct MediaClientParsingTests {
    @Test func probePayloadRoundTripsInsideAnRTPPacket() throws {
        let probe = ProbePayload(speaker: 7, sequence: 0x0102_0304, sentAt: 0x1122_3344_5566_7788)
        let payload = probe.encoded(length: 160)
        #expect(payload.count == 160)
        let packet = [UInt8](repeating: 0, count: 20) + payload
        #expect(ProbePayload(packet, in: 20..<packet.count) == probe)
    }

    @Test func probePayloadRefusesForeignAndShortPayloads() {
        let payload = ProbePayload(speaker: 1, sequence: 2, sentAt: 3).encoded(length: 40)
        var foreign = payload
        foreign[0] = 0x00
        #expect(ProbePayload(foreign, in: 0..<foreign.count) == nil)
        #expect(ProbePayload(payload, in: 0..<(ProbePayload.headerLength - 1)) == nil)
        #expect(ProbePayload(payload, in: 0..<(payload.count + 1)) == nil)
        #expect(ProbePayload(speaker: 1, sequence: 2, sentAt: 3).encoded(length: 4).count == ProbePayload.headerLength)
    }

    @Test func answerGivesTheCandidateCredentialsAndFingerprint() throws {
        let certificate = try DTLSCertificate(commonName: "server")
        let serverICE = ICECredentials.random()
        let offer = mediaOffer(ice: ICECredentials.random(), fingerprint: try DTLSCertificate(commonName: "client").fingerprint,
                               ssrc: 42, slots: 2, sends: true)
        let lines = ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0", "m=audio 9 UDP/TLS/RTP/SAVPF 111",
                     "c=IN IP4 127.0.0.1", "a=ice-ufrag:\(serverICE.usernameFragment)", "a=ice-pwd:\(serverICE.password)",
                     "a=fingerprint:\(certificate.fingerprint.sdpValue)", "a=setup:passive", "a=mid:0",
                     "a=candidate:1 1 udp 2130706431 127.0.0.1 40123 typ host", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2"]
        let answer = try MediaAnswer(parsing: lines.joined(separator: "\r\n") + "\r\n")
        #expect(answer.address == TransportAddress(host: "127.0.0.1", port: 40123))
        #expect(answer.ice == serverICE)
        #expect(answer.fingerprint == certificate.fingerprint)
        let parsedOffer = try SessionDescription(parsing: offer)
        #expect(parsedOffer.media.count == 3)
        #expect(parsedOffer.media.first?.sources.first?.ssrc == 42)
    }

    @Test func answerWithoutACandidateIsRefused() throws {
        let serverICE = ICECredentials.random()
        let lines = ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 127.0.0.1",
                     "a=ice-ufrag:\(serverICE.usernameFragment)", "a=ice-pwd:\(serverICE.password)",
                     "a=fingerprint:\(try DTLSCertificate(commonName: "server").fingerprint.sdpValue)", "a=mid:0"]
        #expect(throws: MediaClientError.self) { try MediaAnswer(parsing: lines.joined(separator: "\r\n") + "\r\n") }
    }
}
