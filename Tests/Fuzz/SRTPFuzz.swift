// libFuzzer target for SRTP and SRTCP unprotect (ParlorSRTP), compiled with Sources/ParlorSRTP as module
// ParlorSRTPFuzz (see run.sh). Byte 0 of the input picks the profile (bit 0) and RTP or RTCP (bit 1), byte 1 a
// position to tamper with; the rest is one datagram. Checks:
// - unprotect never crashes or traps on any bytes, and never accepts a packet it did not see protected under its
//   keys (the fuzzer cannot forge a tag; an accepted packet is reported);
// - the datagram as plain RTP/RTCP, when the sender protects it, unprotects to the same bytes; the same protected
//   packet again is refused as a replay, and with one byte changed it is refused;
// - both API forms (array and raw buffer) agree, and a refused protect leaves the caller's packet unchanged.

enum SRTPFuzz {
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("SRTP invariant violated: \(message())") }
    }

    static func keyingMaterial(_ profile: SRTPProtectionProfile) -> [UInt8] {
        (0..<profile.keyingMaterialLength).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let profile: SRTPProtectionProfile = data[0] & 1 == 0 ? .aes128CMHMACSHA1_80 : .aeadAES128GCM
    let isRTCP = data[0] & 2 != 0
    let tamperPosition = Int(data[1])
    let datagram = Array(UnsafeBufferPointer(start: data + 2, count: size - 2))
    let key = SRTPFuzz.keyingMaterial(profile)
    do {
        let sender = try SRTPSender(profile: profile, keyingMaterial: key)
        let receiver = try SRTPReceiver(profile: profile, keyingMaterial: key)

        // Arbitrary bytes as SRTP/SRTCP: refused (a forged tag would mean a broken check), never a crash.
        var arbitrary = datagram
        let accepted = Result { () throws(SRTPError) in
            isRTCP ? try receiver.unprotectRTCP(&arbitrary) : try receiver.unprotectRTP(&arbitrary)
        }
        if case .success = accepted { SRTPFuzz.check(false, "accepted \(datagram.count) arbitrary bytes") }

        // The datagram as a plain packet: protect, then unprotect gives it back; a replay and a tampered copy fail.
        var packet = datagram
        let overhead = isRTCP ? profile.rtcpOverhead : profile.rtpOverhead
        packet.reserveCapacity(packet.count + overhead)
        let protected = Result { () throws(SRTPError) in isRTCP ? try sender.protectRTCP(&packet) : try sender.protectRTP(&packet) }
        guard case .success = protected else {
            SRTPFuzz.check(packet == datagram, "a refused protect changed the packet")
            return 0
        }
        SRTPFuzz.check(packet.count == datagram.count + overhead, "protected length \(packet.count) for \(datagram.count)")

        // Raw buffer form, on a tampered copy first (it must not move the receiver's state), then the original.
        var tampered = packet
        tampered[tamperPosition % tampered.count] ^= 0x5A
        let tamperedLength = tampered.count
        let tamperedResult = tampered.withUnsafeMutableBytes { bytes in
            Result { () throws(SRTPError) in
                isRTCP ? try receiver.unprotectRTCP(bytes, length: tamperedLength) : try receiver.unprotectRTP(bytes, length: tamperedLength)
            }
        }
        if case .success = tamperedResult { SRTPFuzz.check(false, "accepted a tampered packet") }

        var received = packet
        let unprotected = Result { () throws(SRTPError) in isRTCP ? try receiver.unprotectRTCP(&received) : try receiver.unprotectRTP(&received) }
        if case .failure(let error) = unprotected { SRTPFuzz.check(false, "refused its own packet: \(error)") }
        SRTPFuzz.check(received == datagram, "round trip changed the packet")

        var replay = packet
        let replayed = Result { () throws(SRTPError) in isRTCP ? try receiver.unprotectRTCP(&replay) : try receiver.unprotectRTP(&replay) }
        switch replayed {
        case .failure(.replayed): break
        default: SRTPFuzz.check(false, "replay not refused as a replay: \(replayed)")
        }
    } catch {
        SRTPFuzz.check(false, "could not make contexts: \(error)")
    }
    return 0
}
