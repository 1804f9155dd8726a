import Testing
@testable import ParlorMedia

/// `ICELiteResponder`: checks as a browser sends them, answered or refused, our own checks (consent) before an address
/// carries media, nomination and consent expiry.
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

    static let browserICE = ICECredentials(usernameFragment: "brwU", password: "browserpassword012345678")

    static func responder() -> ICELiteResponder {
        var responder = ICELiteResponder()
        responder.addSession(local: server, remote: browserICE)
        return responder
    }

    /// The browser's answer to one of our checks: success, its integrity under the browser's password.
    static func answer(_ request: ICELiteResponder.Request, password: String = browserICE.password) throws -> [UInt8] {
        let parsed = try STUNMessage(parsing: request.bytes)
        return STUNMessage(type: .bindingSuccess, transactionID: parsed.transactionID, attributes: [.xorMappedAddress(request.address)])
            .serialized(integrityKey: Array(password.utf8), fingerprint: true)
    }

    /// A valid check from `address`, then our check there answered: the address consented.
    static func consent(_ responder: inout ICELiteResponder, from address: TransportAddress, useCandidate: Bool = false, id: UInt8 = 1,
                        now: UInt64 = 0) throws -> ICELiteResponder.Event? {
        let outcome = responder.handle(check(useCandidate: useCandidate, id: id), from: address, now: now)
        let request = try #require(outcome.request)
        return responder.handle(try answer(request), from: address, now: now).event
    }

    @Test func answersAValidCheckAndChecksTheAddressBeforeSelectingIt() throws {
        var responder = Self.responder()
        let outcome = responder.handle(Self.check(), from: Self.browser, now: 0)
        let bytes = try #require(outcome.response)
        let response = try STUNMessage(parsing: bytes)
        #expect(response.type == .bindingSuccess)
        #expect(response.transactionID == Array(repeating: 1, count: 12))
        #expect(response.xorMappedAddress == Self.browser)
        #expect(response.hasValidIntegrity(in: bytes, key: Array(Self.server.password.utf8)))
        #expect(response.hasValidFingerprint(in: bytes))
        // DTLS and SRTP are accepted from there, but media goes nowhere yet: our own check goes to the address first.
        #expect(outcome.event == nil)
        #expect(responder.session(at: Self.browser) == "srvU")
        #expect(responder.selectedAddress(ofSession: "srvU") == nil)
        let request = try #require(outcome.request)
        #expect(request.address == Self.browser)
        let ours = try STUNMessage(parsing: request.bytes)
        #expect(ours.type == .bindingRequest)
        #expect(ours.username == "brwU:srvU")
        #expect(ours.transactionID != Array(repeating: 1, count: 12))
        #expect(ours.hasValidIntegrity(in: request.bytes, key: Array(Self.browserICE.password.utf8)))
        #expect(ours.hasValidFingerprint(in: request.bytes))
        #expect(ours.attributes.contains { if case .iceControlled = $0 { true } else { false } })
        #expect(ours.priority != nil)
        // Its answer selects the address.
        let event = responder.handle(try Self.answer(request), from: Self.browser, now: 1).event
        #expect(event == .selected(usernameFragment: "srvU", address: Self.browser, nominated: false))
        #expect(responder.selectedAddress(ofSession: "srvU") == Self.browser)
        #expect(!responder.isNominated("srvU"))
    }

    /// Issue 34 item 3: a valid check with USE-CANDIDATE from another address moved the audio there at once.
    @Test func useCandidateMovesTheSelectionOnlyOnceTheNewAddressAnswers() throws {
        var responder = Self.responder()
        _ = try Self.consent(&responder, from: Self.browser)
        let outcome = responder.handle(Self.check(useCandidate: true, id: 2), from: Self.second, now: 1)
        #expect(outcome.response != nil)
        #expect(outcome.event == nil)
        #expect(responder.selectedAddress(ofSession: "srvU") == Self.browser)
        let request = try #require(outcome.request)
        #expect(request.address == Self.second)
        // Answers that prove nothing: from another address, under another password, or to another transaction.
        #expect(responder.handle(try Self.answer(request), from: Self.browser, now: 2).event == nil)
        #expect(responder.handle(try Self.answer(request, password: Self.server.password), from: Self.second, now: 2).event == nil)
        var other = ICELiteResponder.Request(bytes: STUNMessage(type: .bindingRequest, transactionID: Array(repeating: 7, count: 12)).serialized(),
                                             address: Self.second)
        other.bytes = try Self.answer(other)
        #expect(responder.handle(other.bytes, from: Self.second, now: 2).event == nil)
        #expect(responder.selectedAddress(ofSession: "srvU") == Self.browser)
        // The real answer moves it.
        #expect(responder.handle(try Self.answer(request), from: Self.second, now: 3).event
                == .selected(usernameFragment: "srvU", address: Self.second, nominated: true))
        #expect(responder.selectedAddress(ofSession: "srvU") == Self.second)
        #expect(responder.isNominated("srvU"))
        // A repeated nominating check is answered but changes nothing.
        let again = responder.handle(Self.check(useCandidate: true, id: 3), from: Self.second, now: 4)
        #expect(again.response != nil)
        #expect(again.event == nil && again.request == nil)
    }

    @Test func anUnansweredCheckIsRetransmittedAFewTimesThenGivenUp() throws {
        var responder = Self.responder()
        let first = try #require(responder.handle(Self.check(), from: Self.browser, now: 0).request)
        // While it is in flight, further checks from there start no other.
        #expect(responder.handle(Self.check(id: 2), from: Self.browser, now: 1).request == nil)
        var sent = [first]
        var now: UInt64 = 0
        while now < 10 * Self.seconds {
            now += 50_000_000
            sent += responder.pendingRequests(now: now)
        }
        #expect(sent.count == ICELiteResponder.maximumAttempts)
        #expect(Set(sent.map(\.bytes)).count == 1)
        #expect(responder.selectedAddress(ofSession: "srvU") == nil)
    }

    @Test func consentIsCheckedEveryFiveSecondsAndLostThirtySecondsAfterTheLastAnswer() throws {
        var responder = Self.responder()
        _ = try Self.consent(&responder, from: Self.browser, useCandidate: true)
        #expect(responder.pendingRequests(now: 4 * Self.seconds).isEmpty)
        let refresh = try #require(responder.pendingRequests(now: 5 * Self.seconds).first)
        #expect(refresh.address == Self.browser)
        // The browser goes on checking us but never answers: consent ends 30 s after its last answer.
        for second in stride(from: 5, through: 29, by: 4) { _ = responder.handle(Self.check(id: UInt8(second)), from: Self.browser, now: UInt64(second) * Self.seconds) }
        #expect(responder.expireConsent(now: 29 * Self.seconds).isEmpty)
        #expect(responder.expireConsent(now: 30 * Self.seconds) == ["srvU"])
        #expect(responder.selectedAddress(ofSession: "srvU") == nil)
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

    @Test func addressesExpireThirtySecondsAfterTheLastValidCheck() throws {
        var responder = Self.responder()
        _ = try Self.consent(&responder, from: Self.browser, useCandidate: true)
        _ = responder.handle(Self.check(id: 2), from: Self.browser, now: 20 * Self.seconds)
        #expect(responder.expireConsent(now: 29 * Self.seconds).isEmpty)
        #expect(responder.session(at: Self.browser) == "srvU")
        #expect(responder.expireConsent(now: 50 * Self.seconds) == ["srvU"])
        #expect(responder.session(at: Self.browser) == nil)
        #expect(responder.selectedAddress(ofSession: "srvU") == nil)
        // A new check and a new answer bring it back.
        #expect(try Self.consent(&responder, from: Self.browser, id: 3, now: 51 * Self.seconds)
                == .selected(usernameFragment: "srvU", address: Self.browser, nominated: false))
    }

    @Test func anAddressProvenByAnotherSessionMovesToIt() throws {
        var responder = Self.responder()
        let other = ICECredentials(usernameFragment: "oth2", password: "otherpassword01234567890")
        let otherBrowser = ICECredentials(usernameFragment: "brw2", password: "otherbrowserpassword0123")
        responder.addSession(local: other, remote: otherBrowser)
        _ = try Self.consent(&responder, from: Self.browser, useCandidate: true)
        let outcome = responder.handle(Self.check(username: "oth2:brw2", password: other.password, id: 2), from: Self.browser, now: 1)
        let request = try #require(outcome.request)
        #expect(responder.handle(try Self.answer(request, password: otherBrowser.password), from: Self.browser, now: 1).event
                == .selected(usernameFragment: "oth2", address: Self.browser, nominated: false))
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
