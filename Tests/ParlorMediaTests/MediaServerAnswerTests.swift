import ParlorLoop
import Testing
@testable import ParlorMedia

/// `MediaServer.answer`: a Chromium offer with receive slots answered the way docs/protocol.md says.
@Suite struct MediaServerAnswerTests {
    /// Chromium's captured offer with `extra` recvonly m-lines (mids 1…) after its microphone.
    static func offer(slots: Int) -> String {
        var text = ChromiumOffer.text.replacingOccurrences(of: "a=group:BUNDLE 0", with: "a=group:BUNDLE " + (0...slots).map(String.init).joined(separator: " "))
        let section = text[text.range(of: "m=audio")!.lowerBound...]
            .replacingOccurrences(of: "a=sendrecv", with: "a=recvonly")
            .split(separator: "\r\n").filter { !$0.hasPrefix("a=ssrc:") && !$0.hasPrefix("a=msid:") }
        for mid in 1...max(1, slots) where slots > 0 {
            text += section.map { $0 == "a=mid:0" ? "a=mid:\(mid)" : String($0) }.joined(separator: "\r\n") + "\r\n"
        }
        return text
    }

    static func server(slots: Int = 3) throws -> MediaServer {
        try MediaServer(configuration: MediaServerConfiguration(bind: TransportAddress(host: "127.0.0.1", port: 0)!, slots: slots), logger: Logger(level: .off))
    }

    @Test func theMicrophoneIsReceivedAndEachSlotSentWithItsOwnSSRC() throws {
        let server = try Self.server()
        defer { server.stop() }
        let (text, setup) = try server.answer(offer: Self.offer(slots: 3), session: 7, group: "RM-1", member: "MEM-1", maySend: true)
        let answer = try SessionDescription(parsing: text)
        #expect(answer.iceLite)
        #expect(answer.media.map(\.mid) == ["0", "1", "2", "3"])
        #expect(answer.media.map(\.direction) == [.recvonly, .sendonly, .sendonly, .sendonly])
        #expect(answer.remoteFingerprint == server.certificate.fingerprint)
        #expect(answer.remoteICE == setup.local)
        #expect(setup.slots.map(\.mid) == ["1", "2", "3"])
        #expect(answer.media.dropFirst().map { $0.sources.first?.ssrc } == setup.slots.map(\.ssrc))
        #expect(Set(setup.slots.map(\.ssrc)).count == 3)
        #expect(text.contains("a=msid:slot-2 slot-2-audio"))
        #expect(text.contains("a=candidate:1 1 udp \(ServerSessionDescription.hostPriority(index: 0)) 127.0.0.1 \(server.localAddress.port) typ host"))
        #expect(setup.sends && setup.audioLevelExtensionID == 1 && setup.payloadType == 111)
        #expect(setup.remoteUsernameFragment == "wJoV")
        #expect(setup.group == "RM-1" && setup.member == "MEM-1" && setup.id == 7)
    }

    @Test func aMemberThatMayNotSendGetsAnInactiveMicrophone() throws {
        let server = try Self.server()
        defer { server.stop() }
        let (text, setup) = try server.answer(offer: Self.offer(slots: 1), session: 1, group: "g", member: "m", maySend: false)
        #expect(try SessionDescription(parsing: text).media.first?.direction == .inactive)
        #expect(!setup.sends)
    }

    @Test func unusableOffersAreRefusedWithTheReason() throws {
        let server = try Self.server(slots: 2)
        defer { server.stop() }
        #expect(throws: SDPError.missing("at most 2 receive m-lines after the microphone's (got 3)")) {
            try server.answer(offer: Self.offer(slots: 3), session: 1, group: "g", member: "m", maySend: true)
        }
        #expect(throws: SDPError.notSDP) { try server.answer(offer: "hello", session: 1, group: "g", member: "m", maySend: true) }
        let noFingerprint = ChromiumOffer.text.split(separator: "\r\n").filter { !$0.hasPrefix("a=fingerprint") }.joined(separator: "\r\n") + "\r\n"
        #expect(throws: SDPError.missing("a=fingerprint")) {
            try server.answer(offer: noFingerprint, session: 1, group: "g", member: "m", maySend: true)
        }
    }
}
