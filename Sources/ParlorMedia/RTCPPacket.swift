/// One packet of an RTCP compound packet (RFC 3550 §6, RFC 4585 §6): the kinds an SFU acts on are read, the rest
/// kept as their type. Parse a compound datagram with `RTCPPacket.parseCompound(_:)`.
public enum RTCPPacket: Sendable, Equatable {
    case senderReport(SenderReport)
    case receiverReport(ReceiverReport)
    /// SDES: each chunk's SSRC and CNAME (other items are skipped).
    case sourceDescription([SourceDescriptionChunk])
    case bye(ssrcs: [UInt32])
    /// Generic NACK (RTPFB, FMT 1): the sequence numbers the sender of the feedback lost.
    case nack(senderSSRC: UInt32, mediaSSRC: UInt32, lost: [UInt16])
    /// Picture loss indication (PSFB, FMT 1): recognised so it is not mistaken for anything else; audio has no use.
    case pictureLossIndication(senderSSRC: UInt32, mediaSSRC: UInt32)
    /// Any other type (APP, XR, transport-cc, REMB, …): the packet type and the count/format field.
    case other(packetType: UInt8, format: UInt8)

    public static let senderReportType: UInt8 = 200, receiverReportType: UInt8 = 201, sourceDescriptionType: UInt8 = 202
    public static let byeType: UInt8 = 203, transportFeedbackType: UInt8 = 205, payloadFeedbackType: UInt8 = 206

    /// Reads every packet of a compound RTCP datagram. Each must be version 2 with a length inside the datagram.
    public static func parseCompound(_ datagram: [UInt8]) throws(RTPError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var offset = 0
        guard datagram.count >= 4 else { throw .truncated }
        while offset < datagram.count {
            guard datagram.count - offset >= 4 else { throw .truncated }
            guard datagram[offset] >> 6 == 2 else { throw .badVersion }
            let length = 4 * (Int(datagram.uint16(at: offset + 2)) + 1)
            guard length <= datagram.count - offset else { throw .badLength }
            var end = offset + length
            if datagram[offset] & 0x20 != 0 {  // padding, only allowed on the last packet
                let padding = Int(datagram[end - 1])
                guard padding > 0, padding <= length - 4 else { throw .badPadding }
                end -= padding
            }
            let body = Array(datagram[(offset + 4)..<end])
            packets.append(try parse(type: datagram[offset + 1], count: Int(datagram[offset] & 0x1F), body: body))
            offset += length
        }
        return packets
    }

    private static func parse(type: UInt8, count: Int, body: [UInt8]) throws(RTPError) -> RTCPPacket {
        switch type {
        case senderReportType:
            guard body.count >= 24 + 24 * count else { throw .badLength }
            let blocks = (0..<count).map { ReportBlock(parsing: body, at: 24 + 24 * $0) }
            return .senderReport(SenderReport(ssrc: body.uint32(at: 0), ntpTimestamp: body.uint64(at: 4), rtpTimestamp: body.uint32(at: 12),
                                              packetCount: body.uint32(at: 16), octetCount: body.uint32(at: 20), blocks: blocks))
        case receiverReportType:
            guard body.count >= 4 + 24 * count else { throw .badLength }
            return .receiverReport(ReceiverReport(senderSSRC: body.uint32(at: 0),
                                                  blocks: (0..<count).map { ReportBlock(parsing: body, at: 4 + 24 * $0) }))
        case sourceDescriptionType:
            return .sourceDescription(try sourceDescriptionChunks(body, count: count))
        case byeType:
            guard body.count >= 4 * count else { throw .badLength }
            return .bye(ssrcs: (0..<count).map { body.uint32(at: 4 * $0) })
        case transportFeedbackType where count == 1:
            guard body.count >= 8, body.count % 4 == 0 else { throw .badLength }
            var lost: [UInt16] = []
            for offset in stride(from: 8, to: body.count, by: 4) {
                let first = body.uint16(at: offset), mask = body.uint16(at: offset + 2)
                lost.append(first)
                for bit in 0..<16 where mask & (1 << bit) != 0 { lost.append(first &+ UInt16(bit + 1)) }
            }
            return .nack(senderSSRC: body.uint32(at: 0), mediaSSRC: body.uint32(at: 4), lost: lost)
        case payloadFeedbackType where count == 1:
            guard body.count >= 8 else { throw .badLength }
            return .pictureLossIndication(senderSSRC: body.uint32(at: 0), mediaSSRC: body.uint32(at: 4))
        default:
            return .other(packetType: type, format: UInt8(count))
        }
    }

    /// SDES chunks: an SSRC, then items (type, length, text) up to a zero type, padded to a word.
    private static func sourceDescriptionChunks(_ body: [UInt8], count: Int) throws(RTPError) -> [SourceDescriptionChunk] {
        var chunks: [SourceDescriptionChunk] = []
        var offset = 0
        for _ in 0..<count {
            guard offset + 4 <= body.count else { throw .badLength }
            let ssrc = body.uint32(at: offset)
            var cname: String?
            offset += 4
            while true {
                guard offset < body.count else { throw .badLength }
                let itemType = body[offset]
                if itemType == 0 {
                    offset = (offset + 4) & ~3  // the end marker and padding to the next word
                    break
                }
                guard offset + 2 <= body.count else { throw .badLength }
                let length = Int(body[offset + 1])
                guard offset + 2 + length <= body.count else { throw .badLength }
                if itemType == 1 { cname = String(decoding: body[(offset + 2)..<(offset + 2 + length)], as: UTF8.self) }
                offset += 2 + length
            }
            chunks.append(SourceDescriptionChunk(ssrc: ssrc, cname: cname))
        }
        return chunks
    }
}

/// One SDES chunk: a source and its CNAME, if it sent one.
public struct SourceDescriptionChunk: Sendable, Equatable {
    public var ssrc: UInt32
    public var cname: String?
}
