import Testing
@testable import ParlorMediaLink

@Suite struct MediaLinkPacketTests {
    struct Link {
        let ends: LinkEnds
        let aSender: MediaLinkSender, aReceiver: MediaLinkReceiver
        let bSender: MediaLinkSender, bReceiver: MediaLinkReceiver

        init() throws {
            ends = try LinkEnds()
            aSender = try MediaLinkSender(keys: ends.aKeys)
            aReceiver = try MediaLinkReceiver(keys: ends.aKeys)
            bSender = try MediaLinkSender(keys: ends.bKeys)
            bReceiver = try MediaLinkReceiver(keys: ends.bKeys)
        }
    }

    static func open(_ receiver: MediaLinkReceiver, _ datagram: [UInt8]) -> Result<MediaLinkPacket, MediaLinkOpenError> {
        Result { () throws(MediaLinkOpenError) in try receiver.open(datagram) }
    }

    @Test func roundTripsInBothDirections() throws {
        let link = try Link()
        for sequence in 0..<20 {
            let rtp = rtpPacket(sequence: UInt16(sequence))
            let fromA = try link.aSender.seal(room: "room-1", speaker: "alice", rtp: rtp)
            #expect(fromA.count == 13 + 1 + 6 + 1 + 5 + 2 + rtp.count + 16)
            // A's sender seals twice per round (the twin below), B's once.
            #expect(try link.bReceiver.open(fromA) == MediaLinkPacket(room: "room-1", speaker: "alice", rtp: rtp, sequence: UInt64(2 * sequence)))
            let fromB = try link.bSender.seal(room: "salle-é", speaker: "bob", rtp: rtp)
            #expect(try link.aReceiver.open(fromB) == MediaLinkPacket(room: "salle-é", speaker: "bob", rtp: rtp, sequence: UInt64(sequence)))
            // The same plaintext in the two directions is never the same ciphertext (own keys, own nonces).
            let twin = try link.aSender.seal(room: "salle-é", speaker: "bob", rtp: rtp)
            #expect(Array(twin.dropFirst(13)) != Array(fromB.dropFirst(13)))
            _ = try link.bReceiver.open(twin)
        }
        // A direction's packets do not open in the other direction's receiver.
        let fromA = try link.aSender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: 1))
        #expect(Self.open(link.aReceiver, fromA) == .failure(.wrongEpoch(expected: link.ends.bOffer.epoch, got: link.ends.aOffer.epoch)))
    }

    @Test func headerIsTheDocumentedLayout() throws {
        let link = try Link()
        _ = try link.aSender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: 0))
        let second = try link.aSender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: 1))
        let epoch = link.ends.aOffer.epoch
        #expect(Array(second.prefix(13)) == [1, UInt8(epoch >> 24), UInt8(truncatingIfNeeded: epoch >> 16), UInt8(truncatingIfNeeded: epoch >> 8),
                                             UInt8(truncatingIfNeeded: epoch), 0, 0, 0, 0, 0, 0, 0, 1])
        #expect(MediaLinkPacketFormat.maximumDatagramLength == 1441)
        #expect(MediaLinkPacketFormat.nonce(salt: [UInt8](repeating: 0xFF, count: 12), sequence: 0x0102_0304_0506_0708)
            == [0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0xFA, 0xF9, 0xF8, 0xF7])
    }

    /// A known answer for the documented format, made outside Swift (Python's `cryptography` AESGCM with the
    /// layout of `MediaLinkPacketFormat`): key 00…0f, salt 10…1b, epoch 0a0b0c0d, sequence 0102030405060708.
    @Test func knownAnswerFromTheDocumentedFormat() throws {
        let direction = MediaLinkDirectionKeys(key: (0..<16).map { UInt8($0) }, nonceSalt: (0x10..<0x1C).map { UInt8($0) })
        let sender = try MediaLinkSender(direction: direction, epoch: 0x0A0B_0C0D, firstSequence: 0x0102_0304_0506_0708)
        let rtp = rtpPacket(sequence: 7, payloadLength: 8)
        let expected = hexBytes("""
            010a0b0c0d0102030405060708b8f885a102f4a728d04d89a4390a31499800c8
            e7a47158b5213bc31adbebad7f19b84445577ce70ef8d60b9af7c54a8d7280ae
            """)
        #expect(try sender.seal(room: "room-1", speaker: "alice", rtp: rtp) == expected)
        let receiver = try MediaLinkReceiver(direction: direction, epoch: 0x0A0B_0C0D)
        #expect(try receiver.open(expected) == MediaLinkPacket(room: "room-1", speaker: "alice", rtp: rtp, sequence: 0x0102_0304_0506_0708))
    }

    /// Any changed bit of header, body or tag is refused, and moves no state: the original still opens afterwards.
    @Test func forgedTagHeaderOrBodyIsRefused() throws {
        let link = try Link()
        let datagram = try link.aSender.seal(room: "room", speaker: "speaker", rtp: rtpPacket(sequence: 9))
        for index in datagram.indices {
            var tampered = datagram
            tampered[index] ^= 0x01
            let expected: MediaLinkOpenError = switch index {
            case 0: .malformed("version 0")
            case 1...4: .wrongEpoch(expected: link.bReceiver.epoch, got: UInt32(tampered.readBigEndian(at: 1, count: 4)))
            default: .forged
            }
            #expect(Self.open(link.bReceiver, tampered) == .failure(expected), "byte \(index)")
        }
        #expect(link.bReceiver.window.isEmpty)
        #expect(try link.bReceiver.open(datagram).sequence == 0)
        // Sealed under other keys (another link's): forged.
        let other = try Link()
        #expect(Self.open(link.bReceiver, try MediaLinkSender(direction: other.ends.aKeys.sending, epoch: link.ends.aOffer.epoch, firstSequence: 10)
            .seal(room: "room", speaker: "s", rtp: rtpPacket(sequence: 1))) == .failure(.forged))
    }

    @Test func replayAndWindowEdges() throws {
        let link = try Link()
        var sealed: [[UInt8]] = []
        for sequence in 0..<1100 { sealed.append(try link.aSender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: UInt16(sequence)))) }
        // Out of order within the window: accepted once each, refused the second time.
        for sequence in [5, 3, 4, 0, 2, 1] { #expect(try link.bReceiver.open(sealed[sequence]).sequence == UInt64(sequence)) }
        for sequence in [5, 0, 3] { #expect(Self.open(link.bReceiver, sealed[sequence]) == .failure(.replayed(sequence: UInt64(sequence)))) }
        // Jump to 1029: 6 is 1023 behind, the window's oldest slot, and unseen; 5 is 1024 behind, below the window.
        _ = try link.bReceiver.open(sealed[1029])
        #expect(try link.bReceiver.open(sealed[6]).sequence == 6)
        #expect(Self.open(link.bReceiver, sealed[6]) == .failure(.replayed(sequence: 6)))
        #expect(Self.open(link.bReceiver, sealed[5]) == .failure(.tooOld(sequence: 5)))
        #expect(Self.open(link.bReceiver, sealed[1029]) == .failure(.replayed(sequence: 1029)))
        // Everything between, unseen so far, is accepted in descending order.
        for sequence in stride(from: 1028, through: 7, by: -1) { #expect(try link.bReceiver.open(sealed[sequence]).sequence == UInt64(sequence)) }
        for sequence in 1030..<1100 { _ = try link.bReceiver.open(sealed[sequence]) }
        #expect(Self.open(link.bReceiver, sealed[1099]) == .failure(.replayed(sequence: 1099)))
        #expect(Self.open(link.bReceiver, sealed[75]) == .failure(.tooOld(sequence: 75)))
        #expect(Self.open(link.bReceiver, sealed[76]) == .failure(.replayed(sequence: 76)))
    }

    /// The window against a plain model (a set of accepted numbers and the highest) over random walks, with jumps
    /// past the whole window and around block edges.
    @Test func replayWindowMatchesAModel() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<50 {
            var window = MediaLinkReplayWindow()
            var accepted = Set<UInt64>()
            var highest: UInt64?
            var cursor = UInt64.random(in: 0...5000, using: &generator)
            for _ in 0..<2000 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: cursor &+= UInt64.random(in: 1000...3000, using: &generator)
                case 1...3: cursor &+= UInt64.random(in: 0...70, using: &generator)
                default: cursor = cursor >= 1100 ? cursor - UInt64.random(in: 0...1100, using: &generator) : cursor
                }
                let expected: MediaLinkOpenError? = if let highest, cursor <= highest, highest - cursor >= 1024 {
                    .tooOld(sequence: cursor)
                } else if accepted.contains(cursor) {
                    .replayed(sequence: cursor)
                } else {
                    nil
                }
                let got = thrownError { () throws(MediaLinkOpenError) in try window.check(cursor) }
                #expect(got == expected, "sequence \(cursor), highest \(String(describing: highest))")
                if got == nil {
                    window.accept(cursor)
                    accepted.insert(cursor)
                    highest = max(highest ?? 0, cursor)
                }
            }
        }
    }

    @Test func sequenceNeverRepeatsAndIsExhaustedAtTheEnd() throws {
        let ends = try LinkEnds()
        let sender = try MediaLinkSender(direction: ends.aKeys.sending, epoch: ends.aKeys.localEpoch, firstSequence: .max - 1)
        let receiver = try MediaLinkReceiver(keys: ends.bKeys)
        #expect(try receiver.open(sender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: 1))).sequence == .max - 1)
        #expect(try receiver.open(sender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: 2))).sequence == .max)
        #expect(thrownError { () throws(MediaLinkSealError) in try sender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: 3)) }
            == .sequenceExhausted)
        #expect(thrownError { () throws(MediaLinkSealError) in try sender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: 3)) }
            == .sequenceExhausted)
    }

    @Test func sealLimitsAndRefusedFieldsSpendNoSequence() throws {
        let link = try Link()
        func seal(room: String = "r", speaker: String = "s", rtp: [UInt8] = rtpPacket(sequence: 0)) -> MediaLinkSealError? {
            thrownError { () throws(MediaLinkSealError) in try link.aSender.seal(room: room, speaker: speaker, rtp: rtp) }
        }
        #expect(seal(room: "") == .fieldOutOfLimits(field: "room id", length: 0, allowed: 1...64))
        #expect(seal(room: String(repeating: "é", count: 33)) == .fieldOutOfLimits(field: "room id", length: 66, allowed: 1...64))
        #expect(seal(speaker: String(repeating: "x", count: 65)) == .fieldOutOfLimits(field: "speaker id", length: 65, allowed: 1...64))
        #expect(seal(rtp: Array(repeating: 0x80, count: 11)) == .fieldOutOfLimits(field: "RTP packet", length: 11, allowed: 12...1280))
        #expect(seal(rtp: rtpPacket(sequence: 0, payloadLength: 1269)) == .fieldOutOfLimits(field: "RTP packet", length: 1281, allowed: 12...1280))
        #expect(link.aSender.nextSequence == 0)
        let largest = try link.aSender.seal(room: String(repeating: "r", count: 64), speaker: String(repeating: "s", count: 64),
                                            rtp: rtpPacket(sequence: 0, payloadLength: 1268))
        #expect(largest.count == MediaLinkPacketFormat.maximumDatagramLength)
        #expect(try link.bReceiver.open(largest).rtp.count == 1280)
        let smallest = try link.aSender.seal(room: "r", speaker: "s", rtp: rtpPacket(sequence: 1, payloadLength: 0))
        #expect(smallest.count == MediaLinkPacketFormat.minimumDatagramLength)
        #expect(try link.bReceiver.open(smallest).rtp == rtpPacket(sequence: 1, payloadLength: 0))
    }

    /// Short, huge and random datagrams, and random bytes behind a valid header: refused with the kind the server
    /// counts, never a trap, and the window stays empty.
    @Test func malformedInputsAreRefusedWithoutTrapping() throws {
        let link = try Link()
        let receiver = link.bReceiver
        let minimum = MediaLinkPacketFormat.minimumDatagramLength
        #expect(Self.open(receiver, []) == .failure(.malformed("0 bytes, shorter than the \(minimum) of the smallest packet")))
        #expect(Self.open(receiver, [1]) == .failure(.malformed("1 bytes, shorter than the \(minimum) of the smallest packet")))
        #expect(Self.open(receiver, [UInt8](repeating: 1, count: 1 << 16)) == .failure(.malformed("65536 bytes, longer than the 1441 of the largest packet")))
        let header = MediaLinkPacketFormat.header(epoch: receiver.epoch, sequence: 3)
        var generator = SeededGenerator(seed: 99)
        for length in 0...1500 {
            let random = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            for datagram in [random, header + random] {
                switch Self.open(receiver, datagram) {
                case .success: Issue.record("accepted \(datagram.count) random bytes")
                case .failure(.malformed), .failure(.wrongEpoch), .failure(.forged): break
                case .failure(let error): Issue.record("\(datagram.count) random bytes refused as \(error)")
                }
            }
        }
        #expect(receiver.window.isEmpty)
        #expect(MediaLinkOpenError.forged.counterLabel == "forged" && MediaLinkOpenError.tooOld(sequence: 1).counterLabel == "too_old")
    }

    /// A body that authenticates but whose fields do not add up (only a broken sender makes one) is malformed, and
    /// its sequence number is spent.
    @Test func authenticatedButMalformedBody() throws {
        let ends = try LinkEnds()
        let cipher = try AES128GCMContext(key: ends.aKeys.sending.key, encrypt: true)
        let receiver = try MediaLinkReceiver(keys: ends.bKeys)
        var body: [UInt8] = [1, UInt8(ascii: "r"), 1, UInt8(ascii: "s"), 0, 12] + rtpPacket(sequence: 0, payloadLength: 0) + [0xEE]
        let header = MediaLinkPacketFormat.header(epoch: ends.aKeys.localEpoch, sequence: 4)
        let count = body.count
        body += [UInt8](repeating: 0, count: 16)
        try header.withUnsafeBufferPointer { header in
            try body.withUnsafeMutableBufferPointer { body in
                try cipher.seal(iv: MediaLinkPacketFormat.nonce(salt: ends.aKeys.sending.nonceSalt, sequence: 4), aad: header.baseAddress!,
                                aadCount: 13, body: body.baseAddress!, bodyCount: count, tag: body.baseAddress! + count)
            }
        }
        #expect(Self.open(receiver, header + body) == .failure(.malformed("bytes after the RTP packet")))
        #expect(Self.open(receiver, header + body) == .failure(.replayed(sequence: 4)))
    }
}
