import ParlorMedia

/// What a client needs from the server's answer: the media port's first host candidate, its ICE credentials and
/// its DTLS fingerprint.
public struct MediaAnswer: Sendable {
    public let address: TransportAddress
    public let ice: ICECredentials
    public let fingerprint: DTLSFingerprint

    public init(parsing text: String) throws {
        let answer = try SessionDescription(parsing: text)
        guard let ice = answer.remoteICE, let fingerprint = answer.remoteFingerprint else { throw MediaClientError("answer lacks ICE or fingerprint") }
        guard let candidate = text.split(separator: "\r\n").first(where: { $0.hasPrefix("a=candidate:") }) else {
            throw MediaClientError("answer has no candidate")
        }
        let fields = candidate.split(separator: " ")
        guard fields.count >= 8, let port = UInt16(fields[5]), let address = TransportAddress(host: String(fields[4]), port: port) else {
            throw MediaClientError("unreadable candidate \(candidate)")
        }
        self.address = address
        self.ice = ice
        self.fingerprint = fingerprint
    }
}

/// The offer, shaped like Chromium's (Tests/ParlorMediaTests/ChromiumOffer.swift): BUNDLE, rtcp-mux, Opus 111, the
/// audio-level extension as id 1 among the others Chromium offers; a microphone m-line (sending when `sends`,
/// with `ssrc`), then `slots` receive-only m-lines. `setup` is what a=setup says: a browser offers "actpass"; a client
/// that must stay the DTLS client whatever the answerer picks (Janus takes the client role when offered actpass)
/// offers "active".
public func mediaOffer(ice: ICECredentials, fingerprint: DTLSFingerprint, ssrc: UInt32, slots: Int, sends: Bool, setup: String = "actpass") -> String {
    let mids = (0...slots).map(String.init)
    var lines = ["v=0", "o=- 5001175385494079587 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE " + mids.joined(separator: " "),
                 "a=extmap-allow-mixed", "a=msid-semantic: WMS mic"]
    for mid in mids {
        lines += ["m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
                  "a=ice-ufrag:\(ice.usernameFragment)", "a=ice-pwd:\(ice.password)", "a=ice-options:trickle",
                  "a=fingerprint:\(fingerprint.sdpValue)", "a=setup:\(setup)", "a=mid:\(mid)",
                  "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
                  "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
                  "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
                  "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid"]
        let microphone = mid == "0"
        lines.append(microphone ? (sends ? "a=sendonly" : "a=inactive") : "a=recvonly")
        if microphone, sends { lines.append("a=msid:mic track") }
        lines += ["a=rtcp-mux", "a=rtcp-rsize", "a=rtpmap:111 opus/48000/2", "a=rtcp-fb:111 transport-cc",
                  "a=fmtp:111 minptime=10;useinbandfec=1", "a=rtpmap:63 red/48000/2", "a=fmtp:63 111/111", "a=rtpmap:9 G722/8000",
                  "a=rtpmap:0 PCMU/8000", "a=rtpmap:8 PCMA/8000", "a=rtpmap:13 CN/8000", "a=rtpmap:110 telephone-event/48000",
                  "a=rtpmap:126 telephone-event/8000"]
        if microphone, sends { lines += ["a=ssrc:\(ssrc) cname:browser", "a=ssrc:\(ssrc) msid:mic track"] }
    }
    return lines.joined(separator: "\r\n") + "\r\n"
}

extension MediaPeer {
    public func offer(slots: Int, sends: Bool, setup: String = "actpass") -> String {
        mediaOffer(ice: ice, fingerprint: certificate.fingerprint, ssrc: ssrc, slots: slots, sends: sends, setup: setup)
    }
}
