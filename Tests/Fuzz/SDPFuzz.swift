// libFuzzer target for the SDP parser and the answer writer. Compiled with the SDP files of Sources/ParlorMedia as
// module ParlorMediaSDP (see run.sh); the input is the description (invalid UTF-8 repaired as a String would).
// Checks:
// - no crash or trap on any text;
// - when an offer is accepted and answered, the answer's text parses, has one m-line per offered one with the
//   same mids, our ICE credentials and fingerprint, passive setup and rtcp-mux, and a direction within the offer's.

enum SDPFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("SDP invariant violated: \(message())") }
    }

    static let ice = ICECredentials(usernameFragment: "fuzzUfrg", password: "fuzzpassword0123456789ab")
    static let fingerprint = DTLSFingerprint(algorithm: "sha-256", digest: Array(0..<32))
    static let candidates = [TransportAddress(ip: .v4(0xC0A8_0114), port: 8080)]
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let offer = try? SessionDescription(parsing: text) else { return 0 }
    _ = offer.remoteICE
    _ = offer.remoteFingerprint
    for media in offer.media {
        _ = media.opus
        _ = media.audioLevelExtensionID
    }
    guard let answer = try? ServerSessionDescription.answer(to: offer, sessionID: 1, ice: SDPFuzz.ice, fingerprint: SDPFuzz.fingerprint,
                                                            candidates: SDPFuzz.candidates, direction: { _ in .sendrecv }) else { return 0 }
    do {
        let parsed = try SessionDescription(parsing: answer.text)
        SDPFuzz.check(parsed.media.count == offer.media.count, "m-line count")
        SDPFuzz.check(parsed.iceLite, "ice-lite")
        for (answered, offered) in zip(parsed.media, offer.media) {
            SDPFuzz.check(answered.mid == offered.mid, "mid \(String(describing: answered.mid)) for \(String(describing: offered.mid))")
            SDPFuzz.check(answered.ice == SDPFuzz.ice && answered.fingerprints == [SDPFuzz.fingerprint], "credentials")
            SDPFuzz.check(answered.setup == .passive && answered.rtcpMux, "setup or rtcp-mux")
            SDPFuzz.check(!answered.direction.sends || offered.direction.receives, "sends what the offer does not receive")
            SDPFuzz.check(!answered.direction.receives || offered.direction.sends, "receives what the offer does not send")
        }
    } catch {
        SDPFuzz.check(false, "our answer does not parse: \(error)\n\(answer.text)")
    }
    return 0
}
