// libFuzzer target for the STUN parser and the ICE-lite responder. Compiled with the STUN files of
// Sources/ParlorMedia as module ParlorMediaSTUN (see run.sh); the input is one datagram. Checks:
// - no crash or trap on any bytes (lengths, attribute values, UTF-8, addresses);
// - what parses re-serializes (with MESSAGE-INTEGRITY and FINGERPRINT recomputed where it had them) to bytes that
//   parse to the same type, transaction and attributes, and pass their own integrity and fingerprint checks;
// - the responder answers only binding requests with a valid FINGERPRINT, and every answer parses as a response to
//   the same transaction.

enum STUNFuzz {
    static let key = Array("fuzzpassword0123456789ab".utf8)

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("STUN invariant violated: \(message())") }
    }

    static func withoutComputed(_ attributes: [STUNAttribute]) -> [STUNAttribute] {
        attributes.filter {
            switch $0 {
            case .messageIntegrity, .fingerprint: false
            default: true
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let message = try? STUNMessage(parsing: bytes) {
        _ = message.hasValidFingerprint(in: bytes)
        _ = message.hasValidIntegrity(in: bytes, key: STUNFuzz.key)
        let again = message.serialized(integrityKey: message.integrityOffset == nil ? nil : STUNFuzz.key,
                                       fingerprint: message.fingerprintOffset != nil)
        do {
            let reparsed = try STUNMessage(parsing: again)
            STUNFuzz.check(reparsed.type == message.type && reparsed.transactionID == message.transactionID, "header changed")
            STUNFuzz.check(STUNFuzz.withoutComputed(reparsed.attributes) == STUNFuzz.withoutComputed(message.attributes),
                           "attributes changed: \(message.attributes) → \(reparsed.attributes)")
            if message.integrityOffset != nil { STUNFuzz.check(reparsed.hasValidIntegrity(in: again, key: STUNFuzz.key), "own integrity") }
            if message.fingerprintOffset != nil { STUNFuzz.check(reparsed.hasValidFingerprint(in: again), "own fingerprint") }
        } catch {
            STUNFuzz.check(false, "own serialization does not parse: \(error)")
        }
    }

    var responder = ICELiteResponder()
    responder.addSession(local: ICECredentials(usernameFragment: "fuzz", password: String(decoding: STUNFuzz.key, as: UTF8.self)),
                         remote: ICECredentials(usernameFragment: "peer", password: "peerpassword0123456789ab"))
    let source = TransportAddress(ip: .v4(0x7F00_0001), port: 5000)
    let outcome = responder.handle(bytes, from: source, now: 1)
    if let response = outcome.response {
        let request = try? STUNMessage(parsing: bytes)
        STUNFuzz.check(request?.type == .bindingRequest && request?.hasValidFingerprint(in: bytes) == true, "answered a non-request")
        let parsed = try? STUNMessage(parsing: response)
        STUNFuzz.check(parsed?.transactionID == request?.transactionID, "response to another transaction")
        STUNFuzz.check(parsed?.type == .bindingSuccess || parsed?.type == .bindingError, "response type")
        if parsed?.type == .bindingSuccess {
            STUNFuzz.check(responder.session(at: source) == "fuzz", "success without a session")
            STUNFuzz.check(parsed?.xorMappedAddress == source, "wrong mapped address")
        }
    } else {
        STUNFuzz.check(responder.session(at: source) == nil, "a session without a response")
    }
    return 0
}
