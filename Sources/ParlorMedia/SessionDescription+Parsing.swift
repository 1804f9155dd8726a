extension SessionDescription {
    /// Descriptions larger than this are refused before parsing: a browser's audio offer is about 2 KB.
    public static let maximumLength = 64 * 1024

    /// Parses SDP text with CRLF or LF line ends.
    public init(parsing text: String) throws(SDPError) {
        self.init()
        guard text.utf8.count <= Self.maximumLength else { throw .malformedLine(0) }
        var sawVersion = false
        var lineNumber = 0
        // "\r\n" is one Character in Swift, and a newline like "\n" is.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            if line.isEmpty { continue }
            if !sawVersion {
                guard line == "v=0" else { throw .notSDP }
                sawVersion = true
                continue
            }
            guard line.count >= 2, line.dropFirst().first == "=" else { throw .malformedLine(lineNumber) }
            let key = line.first!
            let value = line.dropFirst(2)
            switch key {
            case "m":
                media.append(try Self.mediaLine(value, lineNumber: lineNumber))
            case "a":
                try apply(attribute: value, lineNumber: lineNumber)
            default:
                continue
            }
        }
        guard sawVersion else { throw .notSDP }
    }

    private static func mediaLine(_ value: Substring, lineNumber: Int) throws(SDPError) -> MediaDescription {
        let fields = value.split(separator: " ")
        guard fields.count >= 3, let port = Int(fields[1].prefix { $0 != "/" }), (0...65535).contains(port) else {
            throw .malformedLine(lineNumber)
        }
        let payloadTypes = fields.dropFirst(3).compactMap { UInt8($0) }.filter { $0 < 128 }
        return MediaDescription(kind: String(fields[0]), port: port, transport: String(fields[2]), payloadTypes: payloadTypes)
    }

    private mutating func apply(attribute: Substring, lineNumber: Int) throws(SDPError) {
        let name: Substring, value: Substring
        if let colon = attribute.firstIndex(of: ":") {
            name = attribute[..<colon]
            value = attribute[attribute.index(after: colon)...]
        } else {
            name = attribute
            value = ""
        }
        // Attributes that mean the same at session and media level.
        switch name {
        case "ice-ufrag", "ice-pwd":
            var credentials = (media.isEmpty ? ice : media[media.count - 1].ice) ?? ICECredentials(usernameFragment: "", password: "")
            if name == "ice-ufrag" { credentials.usernameFragment = String(value) } else { credentials.password = String(value) }
            if media.isEmpty { ice = credentials } else { media[media.count - 1].ice = credentials }
            return
        case "fingerprint":
            guard let fingerprint = DTLSFingerprint(sdpValue: value) else { throw .malformedLine(lineNumber) }
            if media.isEmpty { fingerprints.append(fingerprint) } else { media[media.count - 1].fingerprints.append(fingerprint) }
            return
        case "setup":
            guard let setup = DTLSSetup(rawValue: String(value)) else { throw .malformedLine(lineNumber) }
            if media.isEmpty { self.setup = setup } else { media[media.count - 1].setup = setup }
            return
        default:
            break
        }
        guard !media.isEmpty else {
            switch name {
            case "group":
                let fields = value.split(separator: " ")
                if fields.first == "BUNDLE" { bundle = fields.dropFirst().map(String.init) }
            case "ice-lite":
                iceLite = true
            default:
                break
            }
            return
        }
        try media[media.count - 1].apply(name: name, value: value, lineNumber: lineNumber)
    }
}

extension MediaDescription {
    fileprivate mutating func apply(name: Substring, value: Substring, lineNumber: Int) throws(SDPError) {
        switch name {
        case "mid":
            mid = String(value)
        case "sendrecv", "sendonly", "recvonly", "inactive":
            direction = MediaDirection(rawValue: String(name))!
        case "rtcp-mux":
            rtcpMux = true
        case "rtpmap":
            // "111 opus/48000/2"
            let fields = value.split(separator: " ", maxSplits: 1)
            let encoding = fields.count == 2 ? fields[1].split(separator: "/") : []
            guard fields.count == 2, let payloadType = UInt8(fields[0]), payloadType < 128, encoding.count >= 2,
                  let clockRate = Int(encoding[1]), clockRate > 0 else { throw .malformedLine(lineNumber) }
            let channels = encoding.count > 2 ? Int(encoding[2]) ?? 1 : 1
            codecs.append(Codec(payloadType: payloadType, name: String(encoding[0]), clockRate: clockRate, channels: channels))
        case "fmtp", "rtcp-fb":
            let fields = value.split(separator: " ", maxSplits: 1)
            guard fields.count == 2, let payloadType = UInt8(fields[0]) else { return }
            guard let index = codecs.firstIndex(where: { $0.payloadType == payloadType }) else { return }
            if name == "fmtp" { codecs[index].parameters = String(fields[1]) } else { codecs[index].feedback.append(String(fields[1])) }
        case "extmap":
            // "1 urn:ietf:params:rtp-hdrext:ssrc-audio-level", the id possibly with "/direction".
            let fields = value.split(separator: " ")
            guard fields.count >= 2, let id = Int(fields[0].prefix { $0 != "/" }), (1...255).contains(id) else {
                throw .malformedLine(lineNumber)
            }
            headerExtensions.append(HeaderExtension(id: id, uri: String(fields[1])))
        case "ssrc":
            // "2178144497 cname:tgnrk0Hrco1AC3p+"
            let fields = value.split(separator: " ", maxSplits: 1)
            guard let first = fields.first, let ssrc = UInt32(first) else { throw .malformedLine(lineNumber) }
            let index: Int
            if let existing = sources.firstIndex(where: { $0.ssrc == ssrc }) {
                index = existing
            } else {
                sources.append(Source(ssrc: ssrc))
                index = sources.count - 1
            }
            if fields.count == 2 {
                if fields[1].hasPrefix("cname:") { sources[index].cname = String(fields[1].dropFirst(6)) }
                if fields[1].hasPrefix("msid:") { sources[index].msid = String(fields[1].dropFirst(5)) }
            }
        default:
            break
        }
    }
}
