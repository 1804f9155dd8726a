// libFuzzer target for ParlorRecording's Ogg and Ogg Opus code. Compiled with Sources/ParlorRecording as module
// ParlorRecordingFuzz (see run.sh), libopus through COpus. Byte 0 picks a mode:
// - even: the rest is a file for `OggOpusReader` (and a packet for `RTPOpusPacket`, the recorder's RTP parser). No crash or trap on any bytes; every page the reader accepted
//   writes back byte for byte; an accepted stream's packets, written again with `OggStreamWriter` under their
//   granule positions, read back the same.
// - odd: the rest is a run of RTP packets for `OpusTrackWriter` (each: 2 bytes sequence, 4 timestamp, 2 arrival
//   in ms since the previous (modulo 2 s), 1 length, then the payload), advanced after each. The file it writes must be read by
//   `OggOpusReader` without error, keep its granule positions increasing, and never hold more than the time fed.

enum OggOpusFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("Ogg Opus invariant violated: \(message())") }
    }

    static func readFile(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count, let page = try? OggPage(parsing: bytes, at: offset) {
            check(page.serialized() == Array(bytes[offset..<offset + page.size]), "page at \(offset) does not write back")
            offset += page.size
        }
        guard var reader = try? OggOpusReader(bytes: bytes) else { return }
        var packets: [OggOpusReader.Packet] = []
        while let packet = try? reader.next() {
            check(packet.data.count <= OggOpusReader.maximumPacketSize, "packet of \(packet.data.count) bytes")
            packets.append(packet)
        }
        var writer = OggStreamWriter(serialNumber: 1)
        var again = writer.append(packet: reader.head.serialized(), granulePosition: 0) + writer.flush()
        again += writer.append(packet: reader.tags.serialized(), granulePosition: 0) + writer.flush()
        // Each packet on a page of its own, the last one's page flagged end of stream.
        for (index, packet) in packets.enumerated() {
            again += writer.append(packet: packet.data, granulePosition: packet.granulePosition)
            again += writer.flush(endOfStream: index == packets.count - 1)
        }
        // Granule positions counted back from a page's end may go below zero, which a page cannot say.
        guard packets.allSatisfy({ $0.granulePosition - Int64($0.samples) >= 0 }) else { return }
        guard !packets.isEmpty, var second = try? OggOpusReader(bytes: again) else {
            check(packets.isEmpty, "a rewritten stream does not read")
            return
        }
        check(second.head == reader.head && second.tags == reader.tags, "headers differ after rewriting")
        let reread = (try? second.readAll()) ?? []
        check(reread.map(\.data) == packets.map(\.data), "packets differ after rewriting")
    }

    static func writeTrack(_ bytes: [UInt8]) {
        var writer = OpusTrackWriter(serialNumber: 2, flushInterval: .milliseconds(200))
        var file: [UInt8] = []
        var offset = 0, now = 0
        while bytes.count - offset >= 9 {
            let sequence = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
            let timestamp = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[offset + 2 + $1]) }
            // Up to 2 s between packets: longer gaps only write more silence, and slow the fuzzer down.
            now += (Int(bytes[offset + 6]) << 8 | Int(bytes[offset + 7])) % 2_000
            let length = min(Int(bytes[offset + 8]), bytes.count - offset - 9)
            let payload = Array(bytes[offset + 9..<offset + 9 + length])
            offset += 9 + length
            writer.receive(sequence: sequence, timestamp: timestamp, payload: payload, arrival: .milliseconds(now))
            file += writer.advance(to: .milliseconds(now))
        }
        file += writer.finish(at: .milliseconds(now))
        do {
            var reader = try OggOpusReader(bytes: file)
            var previous: Int64 = 0
            while let packet = try reader.next() {
                check(packet.granulePosition > previous, "granule positions go back: \(previous) then \(packet.granulePosition)")
                previous = packet.granulePosition
            }
            // Fed up to `now`: the file holds at most that, the pre-skip and the 2.5 ms the last page may add.
            check(previous <= Int64(OpusTrackWriter.preSkip) + Int64(now) * 48 + 120 + 5_760, "\(previous) samples for \(now) ms")
        } catch {
            check(false, "the track writer's file does not read: \(error)")
        }
    }
}

extension OggOpusFuzz {
    /// The recorder's RTP parser on the same bytes: no trap, and a payload it finds is a non-empty run of the packet
    /// after the 12-byte header.
    static func parseRTP(_ bytes: [UInt8]) {
        guard let packet = RTPOpusPacket(parsing: bytes) else { return }
        check(!packet.payload.isEmpty && packet.payload.count <= bytes.count - 12, "payload of \(packet.payload.count) of \(bytes.count) bytes")
        let found = (12...(bytes.count - packet.payload.count)).contains { Array(bytes[$0..<$0 + packet.payload.count]) == packet.payload }
        check(found, "the payload is not in the packet")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] & 1 == 0 {
        OggOpusFuzz.readFile(bytes)
        OggOpusFuzz.parseRTP(bytes)
    } else {
        OggOpusFuzz.writeTrack(bytes)
    }
    return 0
}
