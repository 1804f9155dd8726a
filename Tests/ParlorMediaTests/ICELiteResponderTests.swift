import Testing
@testable import ParlorMedia

/// `ICELiteResponder`: checks as a browser sends them, answered or refused, nomination and consent expiry.
@Suite struct ICELiteResponderTests {
    static let server = ICECredentials(usernameFragment: "srvU", password: "serverpassword0123456789")
    static let browser = TransportAddress(host: "192.0.2.10", port: 50000)!
    static let second = TransportAddress(host: "192.0.2.10", port: 50002)!
    static let seconds: UInt64 = 1_000_000_000

    static func check(username: String = "srvU:brwU", password: String = server.password, useCandidate: Bool = false,
                      controlled: Bool = false, id: UInt8 = 1) -> [UInt8] {
        var attributes: [STUNAttribute] = [.username(username), .priority(1_845_501_695)]
        attributes.append(controlled ? .iceControlled(tieBreaker: 7) : .iceControlling(tieBreaker: 7))
        if useCandidate { attributes.append(.useCandidate) }
        return STUNMessage(type: .bindingRequest, transactionID: Array(repeating: id, count: 12), attributes: attributes)
            .serialized(integrityKey: Array(password.utf8), fingerprint: true)
    }

    static func responder() -> ICELiteResponder {
        var responder = ICELiteResponder()
        responder.addSession(local: server, remoteUsernameFragment: "brwU")
        return responder
    }

    @Test func answersAValidCheckWithTheSourceAddressAndSelectsIt() throws {
        var responder = Self.responder()
        let outcome = responder.handle(Self.check(), from: Self.browser, now: 0)
        let bytes = try #require(outcome.response)
        let response = try STUNMessage(parsing: bytes)
        #expect(response.type == .bindingSuccess)
        #expect(response.transactionID == Array(repeating: 1, count: 12))
        #expect(response.xorMappedAddress == Self.browser)
        #expect(response.hasValidIntegrity(in: bytes, key: Array(Self.server.password.utf8)))
        #expect(response.hasValidFingerprint(in: bytes))
        #expect(outcome.event == .selected(usernameFragment: "srvU", address: Self.browser, nominated: false))
        #expect(responder.session(at: Self.browser) == "srvU")
        #expect(responder.selectedAddress(ofSession: "srvU") == Self.browser)
        #expect(!responder.isNominated("srvU"))
    }

    @Test func useCandidateNominatesAndMovesTheSelection() {
        var responder = Self.responder()
        _ = responder.handle(Self.check(), from: Self.browser, now: 0)
        let outcome = responder.handle(Self.check(useCandidate: true, id: 2), from: Self.second, now: 1)
        #expect(outcome.event == .selected(usernameFragment: "srvU", address: Self.second, nominated: true))
        #expect(responder.selectedAddress(ofSession: "srvU") == Self.second)
        #expect(responder.isNominated("srvU"))
        // A repeated nominating check is answered but changes nothing.
        let again = responder.handle(Self.check(useCandidate: true, id: 3), from: Self.second, now: 2)
        #expect(again.response != nil)
        #expect(again.event == nil)
    }

    /// Issue 34 item 4: an error answer to an unauthenticated request was larger than the request; none is sent.
    @Test func aWrongPasswordOrUfragOrNoUsernameIsDroppedUnansweredAndSelectsNothing() throws {
        var responder = Self.responder()
        let bare = STUNMessage(type: .bindingRequest, transactionID: Array(repeating: 4, count: 12)).serialized(fingerprint: true)
        let noIntegrity = STUNMessage(type: .bindingRequest, transactionID: Array(repeating: 5, count: 12), attributes: [.username("srvU:brwU")])
            .serialized(fingerprint: true)
        for request in [Self.check(password: "not the password"), Self.check(username: "srvU:other"), Self.check(username: "nobody:brwU"),
                        bare, noIntegrity] {
            let outcome = responder.handle(request, from: Self.browser, now: 0)
            #expect(outcome.response == nil)
            #expect(outcome.unauthenticated)
            #expect(outcome.event == nil)
        }
        #expect(responder.session(at: Self.browser) == nil)
    }

    @Test func aBadFingerprintOrAResponseIsDroppedSilently() {
        var responder = Self.responder()
        var request = Self.check()
        request[request.count - 1] ^= 0xFF
        #expect(responder.handle(request, from: Self.browser, now: 0) == ICELiteResponder.Outcome())
        let response = STUNMessage(type: .bindingSuccess, transactionID: Array(repeating: 0, count: 12)).serialized(fingerprint: true)
        #expect(responder.handle(response, from: Self.browser, now: 0) == ICELiteResponder.Outcome())
        #expect(responder.handle([0x80, 0x6F, 0, 0], from: Self.browser, now: 0) == ICELiteResponder.Outcome())
    }

    @Test func aControlledPeerGetsARoleConflict() throws {
        var responder = Self.responder()
        let bytes = try #require(responder.handle(Self.check(controlled: true), from: Self.browser, now: 0).response)
        #expect(try STUNMessage(parsing: bytes).errorCode == 487)
        #expect(responder.session(at: Self.browser) == nil)
    }

    @Test func consentExpiresThirtySecondsAfterTheLastValidCheck() {
        var responder = Self.responder()
        _ = responder.handle(Self.check(useCandidate: true), from: Self.browser, now: 0)
        _ = responder.handle(Self.check(id: 2), from: Self.browser, now: 20 * Self.seconds)
        #expect(responder.expireConsent(now: 49 * Self.seconds).isEmpty)
        #expect(responder.session(at: Self.browser) == "srvU")
        #expect(responder.expireConsent(now: 50 * Self.seconds) == ["srvU"])
        #expect(responder.session(at: Self.browser) == nil)
        #expect(responder.selectedAddress(ofSession: "srvU") == nil)
        // A new check brings it back.
        let outcome = responder.handle(Self.check(id: 3), from: Self.browser, now: 51 * Self.seconds)
        #expect(outcome.event == .selected(usernameFragment: "srvU", address: Self.browser, nominated: false))
    }

    @Test func anAddressProvenByAnotherSessionMovesToIt() {
        var responder = Self.responder()
        let other = ICECredentials(usernameFragment: "oth2", password: "otherpassword01234567890")
        responder.addSession(local: other, remoteUsernameFragment: "brw2")
        _ = responder.handle(Self.check(useCandidate: true), from: Self.browser, now: 0)
        let outcome = responder.handle(Self.check(username: "oth2:brw2", password: other.password, id: 2), from: Self.browser, now: 1)
        #expect(outcome.event == .selected(usernameFragment: "oth2", address: Self.browser, nominated: false))
        #expect(responder.session(at: Self.browser) == "oth2")
        #expect(responder.selectedAddress(ofSession: "srvU") == nil)
        #expect(!responder.isNominated("srvU"))
    }

    @Test func removingASessionForgetsItsAddresses() {
        var responder = Self.responder()
        _ = responder.handle(Self.check(), from: Self.browser, now: 0)
        responder.removeSession(usernameFragment: "srvU")
        #expect(responder.session(at: Self.browser) == nil)
        #expect(responder.handle(Self.check(id: 2), from: Self.browser, now: 0).event == nil)
    }

    @Test func demultiplexesByFirstByte() {
        #expect(MediaPacketKind(firstByte: 0) == .stun)
        #expect(MediaPacketKind(firstByte: 3) == .stun)
        #expect(MediaPacketKind(firstByte: 4) == .unknown)
        #expect(MediaPacketKind(firstByte: 20) == .dtls)
        #expect(MediaPacketKind(firstByte: 63) == .dtls)
        #expect(MediaPacketKind(firstByte: 64) == .unknown)
        #expect(MediaPacketKind(firstByte: 128) == .rtp)
        #expect(MediaPacketKind(firstByte: 191) == .rtp)
        #expect(MediaPacketKind(firstByte: 192) == .unknown)
        #expect(MediaPacketKind([]) == .unknown)
        #expect(MediaPacketKind.isRTCP([0x80, 200]))
        #expect(!MediaPacketKind.isRTCP([0x80, 111]))
    }

    @Test func randomCredentialsUseICECharsAndDiffer() {
        let a = ICECredentials.random(), b = ICECredentials.random()
        #expect(a != b)
        #expect(a.usernameFragment.count == 8 && a.password.count == 24)
        #expect(a.password.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "/" })
    }
}
