import ParlorMedia

/// The answer a receive-only client gives to a server's offer (Janus's VideoRoom offers each subscriber its
/// streams): one m-section per offered one, in order, same kind and mid, the first offered payload type with its
/// rtpmap and fmtp, recvonly, rtcp-mux, our ICE credentials and fingerprint, and a=setup:active (we are the DTLS
/// client, as `MediaPeer` always is). An offered data channel is rejected (port 0). The server's own candidate,
/// credentials and fingerprint are read from its offer with `MediaAnswer(parsing:)`.
public func receiveOnlyAnswer(to offer: String, ice: ICECredentials, fingerprint: DTLSFingerprint) throws -> String {
    let description = try SessionDescription(parsing: offer)
    guard !description.media.isEmpty else { throw MediaClientError("the offer has no m-line") }
    let mids = description.media.compactMap(\.mid)
    var lines = ["v=0", "o=- 4611731400430051336 2 IN IP4 127.0.0.1", "s=-", "t=0 0"]
    if mids.count == description.media.count { lines.append("a=group:BUNDLE " + mids.joined(separator: " ")) }
    lines.append("a=msid-semantic: WMS")
    for media in description.media {
        guard media.kind == "audio" || media.kind == "video", let payloadType = media.payloadTypes.first else {
            lines += ["m=\(media.kind) 0 \(media.transport) \(media.payloadTypes.first.map(String.init) ?? "webrtc-datachannel")", "c=IN IP4 0.0.0.0"]
            if let mid = media.mid { lines.append("a=mid:\(mid)") }
            continue
        }
        lines += ["m=\(media.kind) 9 \(media.transport) \(payloadType)", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
                  "a=ice-ufrag:\(ice.usernameFragment)", "a=ice-pwd:\(ice.password)", "a=fingerprint:\(fingerprint.sdpValue)",
                  "a=setup:active"]
        if let mid = media.mid { lines.append("a=mid:\(mid)") }
        lines += ["a=recvonly", "a=rtcp-mux"]
        if let codec = media.codecs.first(where: { $0.payloadType == payloadType }) {
            let channels = codec.channels > 1 ? "/\(codec.channels)" : ""
            lines.append("a=rtpmap:\(payloadType) \(codec.name)/\(codec.clockRate)\(channels)")
            if let parameters = codec.parameters { lines.append("a=fmtp:\(payloadType) \(parameters)") }
        }
    }
    return lines.joined(separator: "\r\n") + "\r\n"
}
