// libFuzzer target for the media link's packet and offer readers (ParlorMediaLink), compiled with
// Sources/ParlorMediaLink as module ParlorMediaLinkFuzz (see run.sh). Byte 0 of the input picks the mode, byte 1 a
// position to tamper with; the rest is the data. Checks:
// - `MediaLinkReceiver.open` never crashes or traps on any bytes and never accepts them (the fuzzer cannot forge a
//   GCM tag under the target's keys), refusing them as malformed, wrong epoch or forged: a fresh receiver has
//   nothing to call a replay; `LinkOffer.verify` never accepts them either (it cannot forge the HMAC);
// - fields carved from the data, when `seal` accepts them, open to the same room, speaker and RTP; a copy with one
//   byte changed is refused first and moves no state; the same datagram again is refused as a replay;
// - an offer made from the data, signed, verifies to the same offer;
// - odd mode: the data as a walk of sequence numbers through `MediaLinkReplayWindow`, against a plain model.

enum MediaLinkFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("media link invariant violated: \(message())") }
    }

    static let epoch: UInt32 = 0x0A0B_0C0D
    static let direction = MediaLinkDirectionKeys(key: (0..<16).map { UInt8(truncatingIfNeeded: $0 * 13 + 5) },
                                                  nonceSalt: (0..<12).map { UInt8(truncatingIfNeeded: $0 * 29 + 1) })
    static let secret = try! MediaLinkSecret(Array("the media link fuzz target's secret".utf8))

    static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    static func arbitrary(_ data: [UInt8]) throws(MediaLinkCryptoError) {
        let receiver = try MediaLinkReceiver(direction: direction, epoch: epoch)
        switch Result(catching: { () throws(MediaLinkOpenError) in try receiver.open(data) }) {
        case .success: check(false, "opened \(data.count) arbitrary bytes")
        case .failure(.malformed), .failure(.wrongEpoch), .failure(.forged): break
        case .failure(let error): check(false, "arbitrary bytes refused as \(error)")
        }
        check(receiver.window.isEmpty, "a refused datagram moved the window")
        if case .success = Result(catching: { () throws(LinkOfferError) in
            try LinkOffer.verify(data, secret: secret, nowMilliseconds: 0, maxAgeMilliseconds: .max)
        }) { check(false, "verified \(data.count) arbitrary bytes as an offer") }
    }

    static func roundTrip(_ data: [UInt8], tamperPosition: Int) throws(MediaLinkCryptoError) {
        guard data.count >= 2 else { return }
        let roomLength = min(Int(data[0]) % 70, data.count - 2), speakerLength = min(Int(data[1]) % 70, data.count - 2 - roomLength)
        let room = text(data[2..<(2 + roomLength)])
        let speaker = text(data[(2 + roomLength)..<(2 + roomLength + speakerLength)])
        let rtp = Array(data[(2 + roomLength + speakerLength)...])
        let sender = try MediaLinkSender(direction: direction, epoch: epoch, firstSequence: UInt64(data[0]) << 56 | UInt64(data[1]))
        let receiver = try MediaLinkReceiver(direction: direction, epoch: epoch)
        let firstSequence = sender.nextSequence
        let sealed: [UInt8]
        do throws(MediaLinkSealError) {
            sealed = try sender.seal(room: room, speaker: speaker, rtp: rtp)
        } catch {
            check(sender.nextSequence == firstSequence, "a refused seal spent a sequence number")
            return
        }
        check(sealed.count == MediaLinkPacketFormat.headerLength + 4 + room.utf8.count + speaker.utf8.count + rtp.count + 16,
              "sealed length \(sealed.count)")
        var tampered = sealed
        tampered[tamperPosition % tampered.count] ^= 0x5A
        if case .success = Result(catching: { () throws(MediaLinkOpenError) in try receiver.open(tampered) }) {
            check(false, "opened a tampered datagram")
        }
        check(receiver.window.isEmpty, "a tampered datagram moved the window")
        switch Result(catching: { () throws(MediaLinkOpenError) in try receiver.open(sealed) }) {
        case .success(let packet):
            check(packet == MediaLinkPacket(room: room, speaker: speaker, rtp: rtp, sequence: firstSequence), "round trip changed the packet")
        case .failure(let error): check(false, "refused its own datagram: \(error)")
        }
        switch Result(catching: { () throws(MediaLinkOpenError) in try receiver.open(sealed) }) {
        case .failure(.replayed): break
        default: check(false, "a replay was not refused as a replay")
        }
    }

    static func offerRoundTrip(_ data: [UInt8]) {
        guard data.count >= 1 else { return }
        let nodeID = text(data.prefix(Int(data[0]) % 40 + 1))
        let createdAt = Int64(bitPattern: data.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let key = (0..<32).map { data[$0 % data.count] }
        guard let offer = try? LinkOffer(nodeID: nodeID, epoch: UInt32(data.count), publicKey: key, createdAtMilliseconds: createdAt) else {
            check(nodeID.utf8.count > 255, "valid fields refused as an offer")
            return
        }
        do throws(LinkOfferError) {
            let verified = try LinkOffer.verify(offer.signed(with: secret), secret: secret, nowMilliseconds: createdAt, maxAgeMilliseconds: 0)
            check(verified == offer, "offer round trip changed it")
        } catch {
            check(false, "refused its own offer: \(error)")
        }
    }

    /// Each pair of bytes moves the cursor: forward by up to 4 × 255 + 63, or back by as much; every number is
    /// checked against the set of accepted ones and the highest.
    static func windowWalk(_ data: [UInt8]) {
        var window = MediaLinkReplayWindow()
        var accepted = Set<UInt64>()
        var highest: UInt64?
        var cursor: UInt64 = 1 << 40
        var index = 0
        while index + 1 < data.count {
            let distance = UInt64(data[index + 1]) * 4 + UInt64(data[index] & 63)
            cursor = data[index] & 64 == 0 ? cursor + distance : cursor - distance
            index += 2
            let expected: MediaLinkOpenError? = if let highest, cursor <= highest, highest - cursor >= MediaLinkReplayWindow.size {
                .tooOld(sequence: cursor)
            } else if accepted.contains(cursor) {
                .replayed(sequence: cursor)
            } else {
                nil
            }
            let got: MediaLinkOpenError?
            do throws(MediaLinkOpenError) { try window.check(cursor); got = nil } catch { got = error }
            check(got == expected, "window said \(String(describing: got)) for \(cursor), the model \(String(describing: expected))")
            if got == nil {
                window.accept(cursor)
                accepted.insert(cursor)
                highest = max(highest ?? 0, cursor)
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let mode = bytes[0], tamperPosition = Int(bytes[1])
    let data = Array(UnsafeBufferPointer(start: bytes + 2, count: size - 2))
    if mode & 1 == 1 {
        MediaLinkFuzz.windowWalk(data)
        return 0
    }
    do throws(MediaLinkCryptoError) {
        try MediaLinkFuzz.arbitrary(data)
        try MediaLinkFuzz.roundTrip(data, tamperPosition: tamperPosition)
    } catch {
        MediaLinkFuzz.check(false, "could not make contexts: \(error)")
    }
    MediaLinkFuzz.offerRoundTrip(data)
    return 0
}
