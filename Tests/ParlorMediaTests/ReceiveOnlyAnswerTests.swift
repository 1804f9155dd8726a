import ParlorMedia
import ParlorMediaClient
import Testing

/// The answer the media load client gives to a server's offer (Janus's VideoRoom offers each subscriber its audio).
@Suite struct ReceiveOnlyAnswerTests {
    /// Shaped like Janus 1.1's subscriber offer: ice-lite, one audio m-line with Opus and the audio-level extension.
    static func janusOffer(ice: ICECredentials, fingerprint: DTLSFingerprint) -> String {
        ["v=0", "o=- 1733270400000000 1 IN IP4 10.77.0.1", "s=VideoRoom 1234", "t=0 0", "a=group:BUNDLE 0", "a=ice-options:trickle",
         "a=fingerprint:\(fingerprint.sdpValue)", "a=extmap-allow-mixed", "a=msid-semantic: WMS *", "a=ice-lite",
         "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 10.77.0.1", "a=sendonly", "a=mid:0", "a=rtcp-mux", "a=ice-ufrag:\(ice.usernameFragment)",
         "a=ice-pwd:\(ice.password)", "a=ice-options:trickle", "a=setup:actpass", "a=rtpmap:111 opus/48000/2",
         "a=fmtp:111 useinbandfec=1", "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level", "a=msid:janus janusa0",
         "a=ssrc:1928374 cname:janus", "a=candidate:1 1 udp 2015363327 10.77.0.1 24680 typ host", "a=end-of-candidates"]
            .joined(separator: "\r\n") + "\r\n"
    }

    @Test func answersEachOfferedAudioLineReceiveOnlyAsTheDTLSClient() throws {
        let serverICE = ICECredentials.random()
        let server = try DTLSCertificate(commonName: "janus")
        let ours = ICECredentials.random()
        let client = try DTLSCertificate(commonName: "client")
        let offer = Self.janusOffer(ice: serverICE, fingerprint: server.fingerprint)
        let answer = try SessionDescription(parsing: receiveOnlyAnswer(to: offer, ice: ours, fingerprint: client.fingerprint))
        #expect(answer.media.count == 1)
        let audio = try #require(answer.media.first)
        #expect(audio.kind == "audio")
        #expect(audio.mid == "0")
        #expect(audio.direction == .recvonly)
        #expect(audio.rtcpMux)
        #expect(audio.setup == .active)
        #expect(audio.payloadTypes == [111])
        #expect(audio.codecs.first?.name.lowercased() == "opus")
        #expect(audio.codecs.first?.parameters == "useinbandfec=1")
        #expect(answer.remoteICE == ours)
        #expect(answer.remoteFingerprint == client.fingerprint)

        // The server's side of the same offer is what the client connects to.
        let remote = try MediaAnswer(parsing: offer)
        #expect(remote.address == TransportAddress(host: "10.77.0.1", port: 24680))
        #expect(remote.ice == serverICE)
        #expect(remote.fingerprint == server.fingerprint)
    }

    @Test func anOfferWithoutMediaIsRefused() {
        let offer = ["v=0", "o=- 1 1 IN IP4 10.77.0.1", "s=-", "t=0 0"].joined(separator: "\r\n") + "\r\n"
        #expect(throws: (any Error).self) {
            try receiveOnlyAnswer(to: offer, ice: ICECredentials.random(), fingerprint: try DTLSCertificate(commonName: "client").fingerprint)
        }
    }

    @Test func anOfferToSendIsMadeActiveWhenAsked() throws {
        let offer = mediaOffer(ice: ICECredentials.random(), fingerprint: try DTLSCertificate(commonName: "client").fingerprint, ssrc: 9,
                               slots: 0, sends: true, setup: "active")
        #expect(try SessionDescription(parsing: offer).media.first?.setup == .active)
    }
}
