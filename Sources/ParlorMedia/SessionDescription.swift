/// What Parlor reads from a browser's SDP (RFC 8866, JSEP RFC 8829): the BUNDLE group, ICE credentials, the DTLS
/// fingerprint and role, and per m-line the mid, direction, codecs, header extensions and SSRCs. Attributes it has
/// no use for are skipped. Parse with `SessionDescription(parsing:)`; Parlor's own descriptions are written by
/// `ServerSessionDescription`.
public struct SessionDescription: Sendable, Equatable {
    public var bundle: [String] = []
    public var iceLite = false
    /// Session-level values; each m-line may override them (`MediaDescription.ice` etc. fall back to these).
    public var ice: ICECredentials?
    /// Every `a=fingerprint` line, in order: RFC 8122 §5 allows one per hash function (aiortc lists three).
    public var fingerprints: [DTLSFingerprint] = []
    public var setup: DTLSSetup?
    public var media: [MediaDescription] = []

    public init() {}

    /// The peer's ICE credentials: the first m-line's, else the session's (with BUNDLE all m-lines share them).
    public var remoteICE: ICECredentials? { media.first?.ice ?? ice }

    /// The peer's certificate fingerprints, found the same way.
    public var remoteFingerprints: [DTLSFingerprint] {
        if let first = media.first, !first.fingerprints.isEmpty { return first.fingerprints }
        return fingerprints
    }

    /// The strongest of the peer's fingerprints the DTLS handshake can check (sha-512, sha-384, then sha-256), or nil.
    public var remoteFingerprint: DTLSFingerprint? { DTLSFingerprint.strongestVerifiable(in: remoteFingerprints) }
}

/// One m-line and its attributes.
public struct MediaDescription: Sendable, Equatable {
    public struct Codec: Sendable, Equatable {
        public var payloadType: UInt8
        public var name: String
        public var clockRate: Int
        public var channels: Int
        public var parameters: String?
        public var feedback: [String] = []

        public init(payloadType: UInt8, name: String, clockRate: Int, channels: Int, parameters: String? = nil) {
            self.payloadType = payloadType
            self.name = name
            self.clockRate = clockRate
            self.channels = channels
            self.parameters = parameters
        }
    }

    public struct HeaderExtension: Sendable, Equatable {
        public var id: Int
        public var uri: String
    }

    public struct Source: Sendable, Equatable {
        public var ssrc: UInt32
        public var cname: String?
        public var msid: String?
    }

    /// "audio", "video", "application".
    public var kind: String
    public var port: Int
    public var transport: String
    public var payloadTypes: [UInt8]
    public var mid: String?
    public var direction: MediaDirection = .sendrecv
    public var rtcpMux = false
    public var ice: ICECredentials?
    public var fingerprints: [DTLSFingerprint] = []
    public var setup: DTLSSetup?
    public var codecs: [Codec] = []
    public var headerExtensions: [HeaderExtension] = []
    /// In the order the `a=ssrc` lines name them.
    public var sources: [Source] = []

    public static let audioLevelURI = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"

    public init(kind: String, port: Int, transport: String, payloadTypes: [UInt8]) {
        self.kind = kind
        self.port = port
        self.transport = transport
        self.payloadTypes = payloadTypes
    }

    /// The first Opus codec the m-line offers.
    public var opus: Codec? { codecs.first { $0.name.lowercased() == "opus" && $0.clockRate == 48000 } }

    /// The id the RFC 6464 audio-level extension has on this m-line.
    public var audioLevelExtensionID: Int? { headerExtensions.first { $0.uri == Self.audioLevelURI }?.id }
}

/// Why a description cannot be used.
public enum SDPError: Error, Sendable, Equatable {
    /// A line that is not `x=value`, or a value that does not read (line number from 1).
    case malformedLine(Int)
    /// No `v=0` first.
    case notSDP
    /// Something the media path needs is missing: which.
    case missing(String)
}
