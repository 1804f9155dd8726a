/// The ICE-lite side of connectivity checks (RFC 8445 §2.5, §7.3) for every media session on the port, as a plain
/// value driven by datagrams and a clock: it never sends anything itself, it says what to send.
///
/// A session is known by our username fragment. A binding request whose USERNAME is `ours:theirs`, whose
/// MESSAGE-INTEGRITY checks out under our password and whose FINGERPRINT is right gets a success response, and its
/// source address becomes valid for that session: DTLS and SRTP from a valid address reach the session, from any
/// other address they are dropped. Anything unauthenticated is dropped unanswered.
///
/// A valid check proves only that its sender knows the session's credentials, which the member itself holds: it
/// does not prove that the source address wants the media. So media goes only to an address that gave consent
/// (RFC 7675, RFC 8445 §7.2.5.3): we send our own binding request there (fresh transaction id, USERNAME
/// `theirs:ours`, MESSAGE-INTEGRITY under the *peer's* password, FINGERPRINT) and a valid success response must come
/// back from that address. The first consented address is selected; an address a USE-CANDIDATE check nominated is
/// selected once it consented; until then the selection stays where it was. Consent is refreshed by a check of ours
/// every `consentInterval` and lost `consentTimeout` after the last answer (or the last valid check from the peer).
public struct ICELiteResponder: Sendable {
    public enum Event: Sendable, Equatable {
        /// `address` now carries the session's media (its first consented address, or a nominated one that consented).
        case selected(usernameFragment: String, address: TransportAddress, nominated: Bool)
    }

    /// A binding request of ours to send.
    public struct Request: Sendable, Equatable {
        public var bytes: [UInt8]
        public var address: TransportAddress
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
        /// Our consent check of a new source address, to send.
        public var request: Request?
    }

    /// Our binding request in flight to one address; retransmitted with the same transaction id.
    struct Probe: Sendable {
        var transactionID: [UInt8]
        var bytes: [UInt8]
        var attempts: Int
        var nextAt: UInt64
    }

    struct Session: Sendable {
        var local: ICECredentials
        var remote: ICECredentials
        var lastValidCheck: [TransportAddress: UInt64] = [:]
        /// When each address last answered a check of ours.
        var consentedAt: [TransportAddress: UInt64] = [:]
        var probes: [TransportAddress: Probe] = [:]
        /// An address a USE-CANDIDATE check came from before it consented.
        var nominationPending: TransportAddress?
        var selected: TransportAddress?
        var nominated = false
    }

    public let consentTimeout: UInt64
    public let consentInterval: UInt64
    /// Addresses one session may have checks in flight to at once; checks from further ones wait.
    static let maximumProbes = 4
    /// Sends of one check before it is given up (100 ms, then doubling: about 3 s).
    static let maximumAttempts = 5
    static let firstRetransmission: UInt64 = 100_000_000
    private var sessions: [String: Session] = [:]
    private var sessionByAddress: [TransportAddress: String] = [:]
    private var probeOwners: [[UInt8]: String] = [:]
    private let tieBreaker = UInt64.random(in: 0...UInt64.max)

    /// `consentTimeout` in nanoseconds: 30 s by RFC 7675; our consent checks every `consentInterval` (5 s).
    public init(consentTimeout: UInt64 = 30_000_000_000, consentInterval: UInt64 = 5_000_000_000) {
        self.consentTimeout = consentTimeout
        self.consentInterval = consentInterval
    }

    /// Starts answering checks for a session: our credentials (from our SDP) and the peer's (from its SDP).
    public mutating func addSession(local: ICECredentials, remote: ICECredentials) {
        removeSession(usernameFragment: local.usernameFragment)
        sessions[local.usernameFragment] = Session(local: local, remote: remote)
    }

    public mutating func removeSession(usernameFragment: String) {
        guard let session = sessions.removeValue(forKey: usernameFragment) else { return }
        for address in session.lastValidCheck.keys where sessionByAddress[address] == usernameFragment {
            sessionByAddress[address] = nil
        }
        for probe in session.probes.values { probeOwners[probe.transactionID] = nil }
    }

    /// The session a non-STUN datagram from `address` belongs to, if a valid check came from there.
    public func session(at address: TransportAddress) -> String? { sessionByAddress[address] }

    /// Where the session's media goes, once an address consented.
    public func selectedAddress(ofSession usernameFragment: String) -> TransportAddress? { sessions[usernameFragment]?.selected }

    public func isNominated(_ usernameFragment: String) -> Bool { sessions[usernameFragment]?.nominated ?? false }

    /// Handles one STUN datagram from `source` at time `now` (monotonic nanoseconds): a peer's check, or the answer
    /// to one of ours.
    public mutating func handle(_ datagram: [UInt8], from source: TransportAddress, now: UInt64) -> Outcome {
        guard let message = try? STUNMessage(parsing: datagram), message.hasValidFingerprint(in: datagram) else { return Outcome() }
        switch message.type {
        case .bindingRequest: return handleRequest(message, datagram, from: source, now: now)
        case .bindingSuccess: return Outcome(event: handleResponse(message, datagram, from: source, now: now))
        default: return Outcome()
        }
    }

    private mutating func handleRequest(_ request: STUNMessage, _ datagram: [UInt8], from source: TransportAddress, now: UInt64) -> Outcome {
        // Unauthenticated requests are dropped without an answer (as mediasoup and other ICE-lite servers do): an
        // error answer would be larger than the smallest request, a reflector for spoofed sources.
        guard let username = request.username, request.integrityOffset != nil else { return Outcome(unauthenticated: true) }
        let parts = username.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, var session = sessions[String(parts[0])], String(parts[1]) == session.remote.usernameFragment,
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
        var outcome = Outcome()
        if Self.hasConsent(session, source, now: now, timeout: consentTimeout) {
            if request.hasUseCandidate, !(session.nominated && session.selected == source) {
                session.selected = source
                session.nominated = true
                outcome.event = .selected(usernameFragment: ufrag, address: source, nominated: true)
            } else if session.selected == nil {
                session.selected = source
                outcome.event = .selected(usernameFragment: ufrag, address: source, nominated: false)
            }
        } else {
            // Media stays where it is until this address answers a check of ours.
            if request.hasUseCandidate { session.nominationPending = source }
            outcome.request = startProbe(&session, to: source, now: now)
        }
        sessions[ufrag] = session
        let response = STUNMessage(type: .bindingSuccess, transactionID: request.transactionID, attributes: [.xorMappedAddress(source)])
        outcome.response = response.serialized(integrityKey: key, fingerprint: true)
        return outcome
    }

    /// The answer to a check of ours: from the address we sent it to, under the peer's password.
    private mutating func handleResponse(_ response: STUNMessage, _ datagram: [UInt8], from source: TransportAddress, now: UInt64) -> Event? {
        guard let ufrag = probeOwners[response.transactionID], var session = sessions[ufrag],
              let probe = session.probes[source], probe.transactionID == response.transactionID,
              response.integrityOffset != nil, response.hasValidIntegrity(in: datagram, key: Array(session.remote.password.utf8)) else {
            return nil
        }
        probeOwners[probe.transactionID] = nil
        session.probes[source] = nil
        session.consentedAt[source] = now
        var event: Event?
        let nominating = session.nominationPending == source
        if nominating || session.selected == nil, session.lastValidCheck[source] != nil,
           session.selected != source || (nominating && !session.nominated) {
            session.selected = source
            session.nominated = nominating
            event = .selected(usernameFragment: ufrag, address: source, nominated: nominating)
        }
        if nominating { session.nominationPending = nil }
        sessions[ufrag] = session
        return event
    }

    /// Checks to send at `now`: retransmissions of checks not yet answered (given up after `maximumAttempts`), and a
    /// fresh consent check to each selected address that last answered `consentInterval` ago.
    public mutating func pendingRequests(now: UInt64) -> [Request] {
        var requests: [Request] = []
        for (ufrag, var session) in sessions {
            var changed = false
            for (address, var probe) in session.probes where now >= probe.nextAt {
                changed = true
                if probe.attempts >= Self.maximumAttempts {
                    session.probes[address] = nil
                    probeOwners[probe.transactionID] = nil
                    continue
                }
                probe.attempts += 1
                probe.nextAt = now + Self.firstRetransmission << UInt64(probe.attempts - 1)
                session.probes[address] = probe
                requests.append(Request(bytes: probe.bytes, address: address))
            }
            if let selected = session.selected, session.probes[selected] == nil,
               now &- (session.consentedAt[selected] ?? 0) >= consentInterval,
               let request = startProbe(&session, to: selected, now: now) {
                changed = true
                requests.append(request)
            }
            if changed { sessions[ufrag] = session }
        }
        return requests
    }

    /// Forgets addresses without a valid check for `consentTimeout`, and selections whose address has not answered a
    /// check of ours for that long; returns the sessions that lost their selected address (they have no media path
    /// until an address consents again).
    public mutating func expireConsent(now: UInt64) -> [String] {
        var lost: [String] = []
        for (ufrag, var session) in sessions {
            let expired = session.lastValidCheck.filter { now >= $0.value && now - $0.value >= consentTimeout }.keys
            let refused = session.consentedAt.filter { now >= $0.value && now - $0.value >= consentTimeout }.keys
            guard !expired.isEmpty || !refused.isEmpty else { continue }
            for address in expired {
                session.lastValidCheck[address] = nil
                if sessionByAddress[address] == ufrag { sessionByAddress[address] = nil }
            }
            for address in refused { session.consentedAt[address] = nil }
            if let selected = session.selected, session.lastValidCheck[selected] == nil || session.consentedAt[selected] == nil {
                session.selected = nil
                session.nominated = false
                lost.append(ufrag)
            }
            sessions[ufrag] = session
        }
        return lost.sorted()
    }

    static func hasConsent(_ session: Session, _ address: TransportAddress, now: UInt64, timeout: UInt64) -> Bool {
        guard let at = session.consentedAt[address] else { return false }
        return now &- at < timeout
    }

    /// A new check of ours to `address`, unless one is in flight there or `maximumProbes` are elsewhere.
    private mutating func startProbe(_ session: inout Session, to address: TransportAddress, now: UInt64) -> Request? {
        guard session.probes[address] == nil, session.probes.count < Self.maximumProbes else { return nil }
        var transactionID: [UInt8] = []
        repeat {
            transactionID = (0..<12).map { _ in UInt8.random(in: 0...255) }
        } while probeOwners[transactionID] != nil
        let attributes: [STUNAttribute] = [.username("\(session.remote.usernameFragment):\(session.local.usernameFragment)"),
                                           .priority(Self.priority), .iceControlled(tieBreaker: tieBreaker)]
        let bytes = STUNMessage(type: .bindingRequest, transactionID: transactionID, attributes: attributes)
            .serialized(integrityKey: Array(session.remote.password.utf8), fingerprint: true)
        session.probes[address] = Probe(transactionID: transactionID, bytes: bytes, attempts: 1, nextAt: now + Self.firstRetransmission)
        probeOwners[transactionID] = session.local.usernameFragment
        return Request(bytes: bytes, address: address)
    }

    /// The PRIORITY our checks carry: a host candidate's (RFC 8445 §5.1.2.1, type preference 126, component 1).
    static let priority: UInt32 = (126 << 24) | (65535 << 8) | 255

    /// Another session proved the address is now its own (a NAT reused the port): the old owner loses it, and its
    /// selection if that was the address.
    private mutating func release(_ address: TransportAddress, from owner: String) {
        guard var session = sessions[owner] else { return }
        session.lastValidCheck[address] = nil
        session.consentedAt[address] = nil
        if let probe = session.probes.removeValue(forKey: address) { probeOwners[probe.transactionID] = nil }
        if session.nominationPending == address { session.nominationPending = nil }
        if session.selected == address {
            session.selected = nil
            session.nominated = false
        }
        sessions[owner] = session
    }
}
