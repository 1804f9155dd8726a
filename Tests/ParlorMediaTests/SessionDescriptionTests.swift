import Testing
@testable import ParlorMedia

/// `SessionDescription` parsing a real Chromium offer, and `ServerSessionDescription` answering it and offering.
@Suite struct SessionDescriptionTests {
    static let serverICE = ICECredentials(usernameFragment: "srvUfrag", password: "serverpassword0123456789")
    static let serverFingerprint = DTLSFingerprint(algorithm: "sha-256", digest: Array(0..<32))
    static let candidates = [TransportAddress(host: "192.168.1.20", port: 8080)!, TransportAddress(host: "fd00::20", port: 8080)!]

    @Test func parsesChromiumsAudioOffer() throws {
        let offer = try SessionDescription(parsing: ChromiumOffer.text)
        #expect(offer.bundle == ["0"])
        #expect(!offer.iceLite)
        #expect(offer.remoteICE == ICECredentials(usernameFragment: "wJoV", password: "q9eHlOr+fEkKETncnGIcrJ8C"))
        let fingerprint = try #require(offer.remoteFingerprint)
        #expect(fingerprint.algorithm == "sha-256")
        #expect(fingerprint.digest.count == 32 && fingerprint.digest.first == 0x3B && fingerprint.digest.last == 0x9F)
        let audio = try #require(offer.media.first)
        #expect(offer.media.count == 1)
        #expect(audio.kind == "audio" && audio.port == 9 && audio.transport == "UDP/TLS/RTP/SAVPF")
        #expect(audio.payloadTypes == [111, 63, 9, 0, 8, 13, 110, 126])
        #expect(audio.mid == "0")
        #expect(audio.setup == .actpass)
        #expect(audio.direction == .sendrecv)
        #expect(audio.rtcpMux)
        #expect(audio.opus?.payloadType == 111)
        #expect(audio.opus?.channels == 2)
        #expect(audio.opus?.parameters == "minptime=10;useinbandfec=1")
        #expect(audio.opus?.feedback == ["transport-cc"])
        #expect(audio.audioLevelExtensionID == 1)
        #expect(audio.headerExtensions.count == 4)
        #expect(audio.codecs.count == 8)
        #expect(audio.sources == [MediaDescription.Source(ssrc: 2_178_144_497, cname: "tgnrk0Hrco1AC3p+",
                                                          msid: "42fb243f-6054-4818-9450-dd9885a19d96 36257ae6-8ee2-4d61-8ee6-051bebc35046")])
    }

    @Test func parsesLFLineEndsTheSame() throws {
        let crlf = try SessionDescription(parsing: ChromiumOffer.text)
        let lf = try SessionDescription(parsing: ChromiumOffer.text.replacingCRLF())
        #expect(crlf == lf)
    }

    @Test func answersTheOfferWithICELitePassiveSetupAndOurCandidates() throws {
        let offer = try SessionDescription(parsing: ChromiumOffer.text)
        let answer = try ServerSessionDescription.answer(to: offer, sessionID: 42, ice: Self.serverICE, fingerprint: Self.serverFingerprint,
                                                         candidates: Self.candidates) { _ in .recvonly }
        let text = answer.text
        #expect(text.hasSuffix("\r\n"))
        // What the browser reads back from our answer, through our own parser.
        let parsed = try SessionDescription(parsing: text)
        #expect(parsed.iceLite)
        #expect(parsed.bundle == ["0"])
        let audio = try #require(parsed.media.first)
        #expect(audio.mid == "0")
        #expect(audio.direction == .recvonly)
        #expect(audio.setup == .passive)
        #expect(audio.rtcpMux)
        #expect(audio.ice == Self.serverICE)
        #expect(audio.fingerprints == [Self.serverFingerprint])
        #expect(audio.payloadTypes == [111])
        #expect(audio.opus?.parameters == "minptime=10;useinbandfec=1")
        #expect(audio.audioLevelExtensionID == 1)
        #expect(audio.port == 8080)
        #expect(text.contains("a=candidate:1 1 udp 2130706431 192.168.1.20 8080 typ host\r\n"))
        #expect(text.contains("a=candidate:2 1 udp 2130706175 fd00::20 8080 typ host\r\n"))
        #expect(text.contains("c=IN IP4 192.168.1.20\r\n"))
        #expect(text.contains("a=end-of-candidates\r\n"))
    }

    @Test func answerDirectionsStayWithinTheOffer() throws {
        var offer = try SessionDescription(parsing: ChromiumOffer.text)
        offer.media[0].direction = .recvonly  // a listener's offer
        let source = ServerSessionDescription.SendSource(ssrc: 7, cname: "parlor", streamID: "room", trackID: "speaker-1")
        let answer = try ServerSessionDescription.answer(to: offer, sessionID: 1, ice: Self.serverICE, fingerprint: Self.serverFingerprint,
                                                         candidates: Self.candidates, sendSources: ["0": source]) { _ in .sendrecv }
        #expect(answer.sections[0].direction == .sendonly)
        #expect(answer.text.contains("a=ssrc:7 cname:parlor\r\n"))
        #expect(answer.text.contains("a=msid:room speaker-1\r\n"))
        #expect(MediaDirection.sendonly.answer(wanting: .sendonly) == .inactive)
        #expect(MediaDirection.sendrecv.answer(wanting: .recvonly) == .recvonly)
    }

    @Test func anOfferOfSeveralSectionsForAListener() throws {
        var sections = [ServerSessionDescription.AudioSection(mid: "0", direction: .recvonly)]
        for index in 1...2 {
            let source = ServerSessionDescription.SendSource(ssrc: UInt32(100 + index), cname: "parlor", streamID: "s\(index)", trackID: "t\(index)")
            sections.append(ServerSessionDescription.AudioSection(mid: String(index), direction: .sendonly, sendSource: source))
        }
        let offer = ServerSessionDescription(sessionID: 9, version: 3, ice: Self.serverICE, fingerprint: Self.serverFingerprint,
                                             setup: .actpass, candidates: Self.candidates, sections: sections)
        let parsed = try SessionDescription(parsing: offer.text)
        #expect(parsed.bundle == ["0", "1", "2"])
        let directions: [MediaDirection] = parsed.media.map(\.direction)
        #expect(directions == [.recvonly, .sendonly, .sendonly])
        let ssrcs: [UInt32?] = parsed.media.map { $0.sources.first?.ssrc }
        #expect(ssrcs == [nil, 101, 102])
        #expect(parsed.media.allSatisfy { $0.setup == .actpass && $0.audioLevelExtensionID == 1 })
        #expect(offer.text.contains("o=- 9 3 IN IP4 0.0.0.0\r\n"))
    }

    @Test func refusesOffersTheMediaPathCannotUse() throws {
        var noMux = try SessionDescription(parsing: ChromiumOffer.text)
        noMux.media[0].rtcpMux = false
        #expect(throws: SDPError.missing("a=rtcp-mux on m-line 0")) {
            _ = try ServerSessionDescription.answer(to: noMux, sessionID: 1, ice: Self.serverICE, fingerprint: Self.serverFingerprint,
                                                    candidates: Self.candidates) { _ in .recvonly }
        }
        let video = try SessionDescription(parsing: ChromiumOffer.text.replacingOccurrences("m=audio", "m=video"))
        #expect(throws: SDPError.missing("Opus on m-line 0")) {
            _ = try ServerSessionDescription.answer(to: video, sessionID: 1, ice: Self.serverICE, fingerprint: Self.serverFingerprint,
                                                    candidates: Self.candidates) { _ in .recvonly }
        }
        #expect(throws: SDPError.notSDP) { _ = try SessionDescription(parsing: "hello") }
        #expect(throws: SDPError.malformedLine(2)) { _ = try SessionDescription(parsing: "v=0\nnonsense\n") }
        #expect(throws: SDPError.malformedLine(3)) { _ = try SessionDescription(parsing: "v=0\nm=audio 9 RTP 0\na=fingerprint:sha-256 XY\n") }
    }

    @Test func fingerprintsReadAndWriteColonHex() throws {
        let fingerprint = try #require(DTLSFingerprint(sdpValue: "SHA-256 0A:ff:10"))
        #expect(fingerprint.algorithm == "sha-256")
        #expect(fingerprint.digest == [0x0A, 0xFF, 0x10])
        #expect(fingerprint.sdpValue == "sha-256 0A:FF:10")
        #expect(DTLSFingerprint(sdpValue: "sha-256 0A::10") == nil)
        #expect(DTLSFingerprint(sdpValue: "sha-256") == nil)
    }
}

extension String {
    func replacingCRLF() -> String { split(separator: "\r\n", omittingEmptySubsequences: false).joined(separator: "\n") }
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
