/// The ICE-lite side of connectivity checks (RFC 8445 §2.5, §7.3) for every media session on the port, as a plain
/// value driven by datagrams and a clock: it never sends anything itself, it says what to answer.
///
/// A session is known by our username fragment. A binding request whose USERNAME is `ours:theirs`, whose
/// MESSAGE-INTEGRITY checks out under our password and whose FINGERPRINT is right gets a success response, and its
/// source address becomes valid for that session: DTLS and SRTP from a valid address reach the session, from any
/// other address they are dropped. The first valid address is selected at once (as mediasoup does, so media can
/// flow before nomination); a check with USE-CANDIDATE nominates its address and selects it. Consent freshness
/// (RFC 7675): an address without a valid check for `consentTimeout` is no longer valid.
public struct ICELiteResponder: Sendable {
    public enum Event: Sendable, Equatable {
        /// `address` now carries the session's media (first valid check, or a nomination moving it).
        case selected(usernameFragment: String, address: TransportAddress, nominated: Bool)
    }

    /// What to do with a STUN datagram.
    public struct Outcome: Sendable, Equatable {
        /// The response to send back to the source address, if any (nothing for indications, responses, and
        /// requests that fail FINGERPRINT, authentication or are not STUN at all).
        public var response: [UInt8]?
        public var event: Event?
        /// A binding request dropped unanswered because it did not authenticate (no USERNAME or MESSAGE-INTEGRITY,
        /// an unknown ufrag, a wrong password): the server counts these.
        public var unauthenticated = false
    }

    struct Session: Sendable {
        var local: ICECredentials
        var remoteUsernameFragment: String
        var lastValidCheck: [TransportAddress: UInt64] = [:]
        var selected: TransportAddress?
        var nominated = false
    }

    public let consentTimeout: UInt64
    private var sessions: [String: Session] = [:]
    private var sessionByAddress: [TransportAddress: String] = [:]

    /// `consentTimeout` in nanoseconds: 30 s by RFC 7675.
    public init(consentTimeout: UInt64 = 30_000_000_000) {
        self.consentTimeout = consentTimeout
    }

    /// Starts answering checks for a session: our credentials (from our SDP) and the peer's ufrag (from its SDP).
    public mutating func addSession(local: ICECredentials, remoteUsernameFragment: String) {
        removeSession(usernameFragment: local.usernameFragment)
        sessions[local.usernameFragment] = Session(local: local, remoteUsernameFragment: remoteUsernameFragment)
    }

    public mutating func removeSession(usernameFragment: String) {
        guard let session = sessions.removeValue(forKey: usernameFragment) else { return }
        for address in session.lastValidCheck.keys where sessionByAddress[address] == usernameFragment {
            sessionByAddress[address] = nil
        }
    }

    /// The session a non-STUN datagram from `address` belongs to, if a valid check came from there.
    public func session(at address: TransportAddress) -> String? { sessionByAddress[address] }

    /// Where the session's media goes, once a check selected an address.
    public func selectedAddress(ofSession usernameFragment: String) -> TransportAddress? { sessions[usernameFragment]?.selected }

    public func isNominated(_ usernameFragment: String) -> Bool { sessions[usernameFragment]?.nominated ?? false }

    /// Answers one STUN datagram from `source` at time `now` (monotonic nanoseconds).
    public mutating func handle(_ datagram: [UInt8], from source: TransportAddress, now: UInt64) -> Outcome {
        guard let request = try? STUNMessage(parsing: datagram), request.type == .bindingRequest,
              request.hasValidFingerprint(in: datagram) else { return Outcome() }
        // Unauthenticated requests are dropped without an answer (as mediasoup and other ICE-lite servers do): an
        // error answer would be larger than the smallest request, a reflector for spoofed sources.
        guard let username = request.username, request.integrityOffset != nil else { return Outcome(unauthenticated: true) }
        let parts = username.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, var session = sessions[String(parts[0])], String(parts[1]) == session.remoteUsernameFragment,
              request.hasValidIntegrity(in: datagram, key: Array(session.local.password.utf8)) else {
            return Outcome(unauthenticated: true)
        }
        let key = Array(session.local.password.utf8)
        // A lite agent is always controlled; a peer that says it is controlled too is in the wrong role (§7.3.1.1).
        if request.attributes.contains(where: { if case .iceControlled = $0 { true } else { false } }) {
            let response = STUNMessage(type: .bindingError, transactionID: request.transactionID,
                                       attributes: [.errorCode(code: 487, reason: "Role Conflict")])
            return Outcome(response: response.serialized(integrityKey: key, fingerprint: true))
        }
        let ufrag = session.local.usernameFragment
        session.lastValidCheck[source] = now
        if let owner = sessionByAddress[source], owner != ufrag { release(source, from: owner) }
        sessionByAddress[source] = ufrag
        var event: Event?
        if request.hasUseCandidate, !(session.nominated && session.selected == source) {
            session.selected = source
            session.nominated = true
            event = .selected(usernameFragment: ufrag, address: source, nominated: true)
        } else if session.selected == nil {
            session.selected = source
            event = .selected(usernameFragment: ufrag, address: source, nominated: false)
        }
        sessions[ufrag] = session
        let response = STUNMessage(type: .bindingSuccess, transactionID: request.transactionID, attributes: [.xorMappedAddress(source)])
        return Outcome(response: response.serialized(integrityKey: key, fingerprint: true), event: event)
    }

    /// Forgets addresses whose consent expired by `now`; returns the sessions that lost their selected address (they
    /// have no media path until a new check selects one).
    public mutating func expireConsent(now: UInt64) -> [String] {
        var lost: [String] = []
        for (ufrag, var session) in sessions {
            let expired = session.lastValidCheck.filter { now >= $0.value && now - $0.value >= consentTimeout }.keys
            guard !expired.isEmpty else { continue }
            for address in expired {
                session.lastValidCheck[address] = nil
                if sessionByAddress[address] == ufrag { sessionByAddress[address] = nil }
            }
            if let selected = session.selected, session.lastValidCheck[selected] == nil {
                session.selected = nil
                session.nominated = false
                lost.append(ufrag)
            }
            sessions[ufrag] = session
        }
        return lost.sorted()
    }

    /// Another session proved the address is now its own (a NAT reused the port): the old owner loses it, and its
    /// selection if that was the address.
    private mutating func release(_ address: TransportAddress, from owner: String) {
        guard var session = sessions[owner] else { return }
        session.lastValidCheck[address] = nil
        if session.selected == address {
            session.selected = nil
            session.nominated = false
        }
        sessions[owner] = session
    }
}
