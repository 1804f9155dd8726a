// libFuzzer target for the RTP header, header-extension and RTCP compound parsers, and the rewriter. Compiled with
// the RTP/RTCP files of Sources/ParlorMedia as module ParlorMediaRTP (see run.sh); the input is one datagram,
// read both as RTP and as RTCP. Checks:
// - no crash or trap on any bytes;
// - an accepted RTP header's payload and extension lie inside the packet and after the fixed header and CSRCs,
//   every extension element inside the extension, in order, without overlap;
// - the rewriter changes only sequence, timestamp and SSRC, and what it wrote parses back;
// - accepted RTCP receiver reports re-serialize to bytes that parse to the same report.

enum RTPFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("RTP invariant violated: \(message())") }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let header = try? RTPHeader(parsing: bytes) {
        let fixed = 12 + 4 * header.csrcCount
        RTPFuzz.check(header.payloadRange.lowerBound >= fixed && header.payloadRange.upperBound <= bytes.count, "payload \(header.payloadRange)")
        if let range = header.extensionRange {
            RTPFuzz.check(range.lowerBound == fixed + 4 && range.upperBound <= header.payloadRange.lowerBound, "extension \(range)")
            let extensions = RTPHeaderExtensions(header: header, packet: bytes)
            var previousEnd = range.lowerBound
            for element in extensions.elements {
                RTPFuzz.check(element.range.lowerBound > previousEnd && element.range.upperBound <= range.upperBound, "element \(element)")
                previousEnd = element.range.upperBound
                _ = extensions.audioLevel(id: element.id, in: bytes)
            }
        }
        var rewriter = RTPRewriter(outgoingSSRC: 0x5151_5151)
        var packet = bytes
        rewriter.rewrite(&packet, header: header, now: 1_000_000)
        RTPFuzz.check(packet.count == bytes.count && packet[0..<2] == bytes[0..<2] && packet[12...] == bytes[12...], "rewriter touched other bytes")
        let rewritten = try? RTPHeader(parsing: packet)
        RTPFuzz.check(rewritten?.ssrc == 0x5151_5151 && rewritten?.payloadRange == header.payloadRange, "rewritten header")
    }
    if let packets = try? RTCPPacket.parseCompound(bytes) {
        RTPFuzz.check(!packets.isEmpty, "an accepted compound with no packet")
        for case .receiverReport(let report) in packets where report.blocks.count < 32 {
            let again = try? RTCPPacket.parseCompound(report.serialized())
            RTPFuzz.check(again == [.receiverReport(report)], "receiver report round trip")
        }
    }
    return 0
}
