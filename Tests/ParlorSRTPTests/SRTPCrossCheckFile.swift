@testable import ParlorSRTP

/// One file of the libsrtp cross-check (layout in Tests/interop/srtp_crosscheck.py): the keying material and the
/// records in delivery order.
struct SRTPCrossCheckFile {
    enum Kind: UInt8 { case rtp = 0, rtcp = 1 }
    enum Expectation: UInt8 { case accepted = 0, replayRefused = 1, tamperedRefused = 2 }

    struct Record {
        var kind: Kind
        var expectation: Expectation
        var plain: [UInt8]
        var protected: [UInt8]
    }

    var profile: SRTPProtectionProfile
    var keyingMaterial: [UInt8]
    var records: [Record] = []

    static func profile(id: UInt8) -> SRTPProtectionProfile? {
        SRTPProtectionProfile.allCases.first { $0.protectionProfileID == UInt16(id) }
    }

    /// The file name's profile part, as the Python script spells it.
    static func name(of profile: SRTPProtectionProfile) -> String {
        profile == .aes128CMHMACSHA1_80 ? "aes128-cm-hmac-sha1-80" : "aead-aes128-gcm"
    }

    init(profile: SRTPProtectionProfile, keyingMaterial: [UInt8]) {
        self.profile = profile
        self.keyingMaterial = keyingMaterial
    }

    init?(parsing bytes: [UInt8]) {
        guard bytes.count >= 10, bytes[0..<4] == [0x50, 0x53, 0x58, 0x31], let profile = Self.profile(id: bytes[4]) else { return nil }
        var offset = 6 + Int(bytes[5])
        self.init(profile: profile, keyingMaterial: Array(bytes[6..<offset]))
        func read(_ count: Int) -> [UInt8]? {
            guard offset + count <= bytes.count else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<(offset + count)])
        }
        guard let countBytes = read(4) else { return nil }
        let count = countBytes.reduce(0) { $0 << 8 | Int($1) }
        for _ in 0..<count {
            guard let head = read(4), let kind = Kind(rawValue: head[0]), let expectation = Expectation(rawValue: head[1]),
                  let plain = read(Int(head[2]) << 8 | Int(head[3])), let lengthBytes = read(2),
                  let protected = read(Int(lengthBytes[0]) << 8 | Int(lengthBytes[1])) else { return nil }
            records.append(Record(kind: kind, expectation: expectation, plain: plain, protected: protected))
        }
        guard offset == bytes.count else { return nil }
    }

    func serialized() -> [UInt8] {
        var bytes: [UInt8] = [0x50, 0x53, 0x58, 0x31, UInt8(profile.protectionProfileID), UInt8(keyingMaterial.count)] + keyingMaterial
        bytes += TestPackets.bigEndian(UInt32(records.count))
        for record in records {
            bytes += [record.kind.rawValue, record.expectation.rawValue, UInt8(record.plain.count >> 8), UInt8(truncatingIfNeeded: record.plain.count)]
            bytes += record.plain
            bytes += [UInt8(record.protected.count >> 8), UInt8(truncatingIfNeeded: record.protected.count)] + record.protected
        }
        return bytes
    }

    /// The same schedule as the Python script's, protected by `SRTPSender`: 10,000 RTP packets of three SSRCs (one
    /// crossing 65535 → 0 early, one late), payloads of 20–1200 bytes, some CSRCs and extensions, an SRTCP packet
    /// after every 16th, local reordering of at most 14 places, 1 % tampered copies before their original and 1 %
    /// replays of one of the last 300 delivered.
    static func protectedBySwift(profile: SRTPProtectionProfile, seed: UInt64) throws -> SRTPCrossCheckFile {
        var generator = SeededGenerator(seed: seed)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let keyingMaterial = bytes(profile.keyingMaterialLength)
        let sender = try SRTPSender(profile: profile, keyingMaterial: keyingMaterial)
        var sequences: [UInt16] = [65535 - 1500, 65535 - 3100, UInt16.random(in: 0...65535, using: &generator)]
        let ssrcs = (0..<3).map { _ in UInt32.random(in: 0...UInt32.max, using: &generator) }
        var inOrder: [(Kind, [UInt8], [UInt8])] = []
        for number in 0..<10_000 {
            let stream = Int.random(in: 0..<3, using: &generator)
            let csrcCount = Int.random(in: 0..<10, using: &generator) == 0 ? Int.random(in: 1...3, using: &generator) : 0
            let extensionWords = Int.random(in: 0..<10, using: &generator) == 0 ? Int.random(in: 1...3, using: &generator) : 0
            let plain = TestPackets.rtp(sequence: sequences[stream], ssrc: ssrcs[stream], payload: bytes(Int.random(in: 20...1200, using: &generator)),
                                        csrcCount: csrcCount, extensionWords: extensionWords)
            sequences[stream] &+= 1
            var protected = plain
            try sender.protectRTP(&protected)
            inOrder.append((.rtp, plain, protected))
            if number % 16 == 0 {
                let plain = TestPackets.rtcp(ssrc: ssrcs[Int.random(in: 0..<3, using: &generator)], body: bytes(4 * Int.random(in: 5...50, using: &generator)))
                var protected = plain
                try sender.protectRTCP(&protected)
                inOrder.append((.rtcp, plain, protected))
            }
        }
        var delivery: [(Kind, [UInt8], [UInt8])] = []
        var position = 0
        while position < inOrder.count {
            var chunk = Array(inOrder[position..<min(inOrder.count, position + Int.random(in: 1...15, using: &generator))])
            position += chunk.count
            if Double.random(in: 0..<1, using: &generator) < 0.33 { chunk.shuffle(using: &generator) }
            delivery += chunk
        }
        var file = SRTPCrossCheckFile(profile: profile, keyingMaterial: keyingMaterial)
        var delivered: [(Kind, [UInt8])] = []
        for (kind, plain, protected) in delivery {
            if Double.random(in: 0..<1, using: &generator) < 0.01 {
                var tampered = protected
                tampered[Int.random(in: 0..<tampered.count, using: &generator)] ^= 1 << UInt8.random(in: 0...7, using: &generator)
                file.records.append(Record(kind: kind, expectation: .tamperedRefused, plain: [], protected: tampered))
            }
            file.records.append(Record(kind: kind, expectation: .accepted, plain: plain, protected: protected))
            delivered.append((kind, protected))
            if Double.random(in: 0..<1, using: &generator) < 0.01 {
                let (replayKind, replayed) = delivered[Int.random(in: max(0, delivered.count - 300)..<delivered.count, using: &generator)]
                file.records.append(Record(kind: replayKind, expectation: .replayRefused, plain: [], protected: replayed))
            }
        }
        return file
    }
}
