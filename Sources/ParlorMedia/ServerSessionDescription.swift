/// The SDP Parlor writes, as an answer to a browser's offer or as its own offer when it renegotiates: ICE-lite, host
/// candidates on the one media port, our certificate's fingerprint, BUNDLE and rtcp-mux, Opus only, and per m-line
/// its direction and, where the server sends, the SSRC it will send with.
public struct ServerSessionDescription: Sendable, Equatable {
    /// One audio m-line.
    public struct AudioSection: Sendable, Equatable {
        public var mid: String
        public var direction: MediaDirection
        public var opus: MediaDescription.Codec
        /// The id of the RFC 6464 audio-level extension, if the peer offered it (or, in our offer, the one we pick).
        public var audioLevelExtensionID: Int?
        /// What we send on this m-line: SSRC, CNAME and media stream id (`a=msid`), when `direction` sends.
        public var sendSource: SendSource?

        public init(mid: String, direction: MediaDirection, opus: MediaDescription.Codec = Self.defaultOpus,
                    audioLevelExtensionID: Int? = 1, sendSource: SendSource? = nil) {
            self.mid = mid
            self.direction = direction
            self.opus = opus
            self.audioLevelExtensionID = audioLevelExtensionID
            self.sendSource = sendSource
        }

        /// Opus as browsers offer it: payload type 111, in-band FEC on.
        public static let defaultOpus = MediaDescription.Codec(payloadType: 111, name: "opus", clockRate: 48000, channels: 2,
                                                               parameters: "minptime=10;useinbandfec=1")
    }

    public struct SendSource: Sendable, Equatable {
        public var ssrc: UInt32
        public var cname: String
        public var streamID: String
        public var trackID: String

        public init(ssrc: UInt32, cname: String, streamID: String, trackID: String) {
            self.ssrc = ssrc
            self.cname = cname
            self.streamID = streamID
            self.trackID = trackID
        }
    }

    public var sessionID: UInt64
    /// Raised by one for each new description of the same session (RFC 3264 §8).
    public var version: UInt64
    public var ice: ICECredentials
    public var fingerprint: DTLSFingerprint
    /// `.passive` in an answer (the browser is the DTLS client); `.actpass` in our offers, which browsers answer
    /// with `active`.
    public var setup: DTLSSetup
    /// Our host candidates: every address the media port is reachable on.
    public var candidates: [TransportAddress]
    public var sections: [AudioSection]

    public init(sessionID: UInt64, version: UInt64 = 1, ice: ICECredentials, fingerprint: DTLSFingerprint, setup: DTLSSetup,
                candidates: [TransportAddress], sections: [AudioSection]) {
        self.sessionID = sessionID
        self.version = version
        self.ice = ice
        self.fingerprint = fingerprint
        self.setup = setup
        self.candidates = candidates
        self.sections = sections
    }

    /// The answer to `offer`: every audio m-line gets the direction `direction(mid)` allows within what the offer
    /// says, Opus with the offer's payload type and the audio-level extension under the offer's id. An offer with
    /// an m-line that is not audio with Opus and rtcp-mux, or without ICE credentials or a fingerprint, is refused:
    /// Parlor's clients offer audio only.
    public static func answer(to offer: SessionDescription, sessionID: UInt64, ice: ICECredentials, fingerprint: DTLSFingerprint,
                              candidates: [TransportAddress], sendSources: [String: SendSource] = [:],
                              direction wanted: (String) -> MediaDirection) throws(SDPError) -> ServerSessionDescription {
        var sections: [AudioSection] = []
        for media in offer.media {
            guard let mid = media.mid else { throw .missing("a=mid") }
            guard media.kind == "audio", let opus = media.opus else { throw .missing("Opus on m-line \(mid)") }
            guard media.rtcpMux else { throw .missing("a=rtcp-mux on m-line \(mid)") }
            let direction = media.direction.answer(wanting: wanted(mid))
            sections.append(AudioSection(mid: mid, direction: direction, opus: opus, audioLevelExtensionID: media.audioLevelExtensionID,
                                         sendSource: direction.sends ? sendSources[mid] : nil))
        }
        guard !sections.isEmpty else { throw .missing("an audio m-line") }
        guard offer.media.allSatisfy({ ($0.ice ?? offer.ice) != nil }) else { throw .missing("a=ice-ufrag/a=ice-pwd") }
        guard offer.media.allSatisfy({ !$0.fingerprints.isEmpty || !offer.fingerprints.isEmpty }) else { throw .missing("a=fingerprint") }
        return ServerSessionDescription(sessionID: sessionID, ice: ice, fingerprint: fingerprint, setup: .passive,
                                        candidates: candidates, sections: sections)
    }

    /// The SDP text, CRLF line ends.
    public var text: String {
        var lines: [String] = [
            "v=0",
            "o=- \(sessionID) \(version) IN IP4 0.0.0.0",
            "s=-",
            "t=0 0",
            "a=ice-lite",
            "a=group:BUNDLE " + sections.map(\.mid).joined(separator: " "),
            "a=msid-semantic: WMS *",
        ]
        let port = candidates.first?.port ?? 9
        let connection = candidates.first.map { "IN \($0.isIPv6 ? "IP6" : "IP4") \($0.host)" } ?? "IN IP4 0.0.0.0"
        for section in sections {
            let opus = section.opus
            lines.append("m=audio \(port) UDP/TLS/RTP/SAVPF \(opus.payloadType)")
            lines.append("c=\(connection)")
            lines.append("a=rtcp:\(port) \(connection)")
            lines.append("a=ice-ufrag:\(ice.usernameFragment)")
            lines.append("a=ice-pwd:\(ice.password)")
            lines.append("a=fingerprint:\(fingerprint.sdpValue)")
            lines.append("a=setup:\(setup.rawValue)")
            lines.append("a=mid:\(section.mid)")
            if let id = section.audioLevelExtensionID { lines.append("a=extmap:\(id) \(MediaDescription.audioLevelURI)") }
            lines.append("a=\(section.direction.rawValue)")
            if let source = section.sendSource { lines.append("a=msid:\(source.streamID) \(source.trackID)") }
            lines.append("a=rtcp-mux")
            lines.append("a=rtcp-rsize")
            lines.append("a=rtpmap:\(opus.payloadType) \(opus.name)/\(opus.clockRate)/\(opus.channels)")
            if let parameters = opus.parameters { lines.append("a=fmtp:\(opus.payloadType) \(parameters)") }
            if let source = section.sendSource {
                lines.append("a=ssrc:\(source.ssrc) cname:\(source.cname)")
                lines.append("a=ssrc:\(source.ssrc) msid:\(source.streamID) \(source.trackID)")
            }
            for (index, candidate) in candidates.enumerated() {
                lines.append("a=candidate:\(index + 1) 1 udp \(Self.hostPriority(index: index)) \(candidate.host) \(candidate.port) typ host")
            }
            lines.append("a=end-of-candidates")
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Host candidate priority (RFC 8445 §5.1.2.1): type preference 126, local preference falling with the order
    /// the addresses were given in, component 1.
    static func hostPriority(index: Int) -> UInt32 {
        (126 << 24) | (UInt32(max(0, 65535 - index)) << 8) | 255
    }
}
