// Micro-probe of ParlorSRTP's cost per packet (bench/srtp-probe builds it in release mode and runs it).
//
//   parlor-srtp-probe [packets]            protect and unprotect of a 200-byte RTP packet, each profile, with 1 and
//                                          with 4,000 live sessions (packets go round-robin over them), ns/packet
//                                          against the 0.8 µs target; and the bare OpenSSL calls of a protect on
//                                          contexts kept the same way (OpenSSLFloor.swift), the floor under it
//   parlor-srtp-probe count-mallocs P OP   for profile P (cm|gcm) and OP (protect|unprotect): after a warm-up, runs
//                                          10,000 packets between mtrace() and muntrace(); bench/srtp-probe runs it
//                                          with glibc's libc_malloc_debug preloaded and counts the traced mallocs
//
// Each session is one SRTPSender and one SRTPReceiver with keys of its own, as the forwarding unit keeps them.
import ParlorSRTP
#if canImport(Glibc)
import Glibc
#endif

let packetLength = 200
let targetNanoseconds = 800.0

/// Wall-clock and this thread's CPU time, in nanoseconds. On a shared machine the CPU time is the fairer figure:
/// it leaves out the time other processes had the core.
struct Clocks {
    var wall: UInt64
    var cpu: UInt64

    static func now() -> Clocks {
        var wall = timespec(), cpu = timespec()
        clock_gettime(CLOCK_MONOTONIC, &wall)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        return Clocks(wall: UInt64(wall.tv_sec) * 1_000_000_000 + UInt64(wall.tv_nsec),
                      cpu: UInt64(cpu.tv_sec) * 1_000_000_000 + UInt64(cpu.tv_nsec))
    }

    /// Per-packet nanoseconds from `start` to now over `packets`.
    func perPacket(since start: Clocks, packets: Int) -> Cost {
        Cost(wall: Double(wall - start.wall) / Double(packets), cpu: Double(cpu - start.cpu) / Double(packets))
    }
}

struct Cost {
    var wall: Double
    var cpu: Double
}

func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

/// One session's two contexts and the sequence number its next packet takes.
final class ProbeSession {
    let sender: SRTPSender
    let receiver: SRTPReceiver
    let ssrc: UInt32
    var sequence: UInt16 = 1

    init(profile: SRTPProtectionProfile) throws(SRTPError) {
        let key = randomBytes(profile.keyingMaterialLength)
        sender = try SRTPSender(profile: profile, keyingMaterial: key)
        receiver = try SRTPReceiver(profile: profile, keyingMaterial: key)
        ssrc = UInt32.random(in: 1...UInt32.max)
    }

    /// A 200-byte RTP packet (12-byte header, 188 bytes of payload) of this session in `buffer`.
    func writePacket(into buffer: UnsafeMutableRawBufferPointer, payload: [UInt8]) {
        let header: [UInt8] = [0x80, 111, UInt8(sequence >> 8), UInt8(truncatingIfNeeded: sequence), 0, 0, 0x03, 0xC0,
                               UInt8(ssrc >> 24), UInt8(truncatingIfNeeded: ssrc >> 16), UInt8(truncatingIfNeeded: ssrc >> 8), UInt8(truncatingIfNeeded: ssrc)]
        buffer.copyBytes(from: header)
        UnsafeMutableRawBufferPointer(rebasing: buffer[12..<packetLength]).copyBytes(from: payload)
        sequence &+= 1
    }
}

struct Measurement {
    var protect: Cost
    var unprotect: Cost
}

/// Unprotects packets protected beforehand, round-robin over `sessions`, timing the unprotect calls as one loop;
/// then protects `rounds` packets likewise (a packet is written into the buffer before each, so that cost is
/// included: a copy of 200 bytes).
func measure(profile: SRTPProtectionProfile, sessionCount: Int, rounds: Int) throws(SRTPError) -> Measurement {
    var sessions: [ProbeSession] = []
    for _ in 0..<sessionCount { sessions.append(try ProbeSession(profile: profile)) }
    let payload = randomBytes(packetLength - 12)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
    defer { buffer.deallocate() }

    // Warm-up: one packet per session (their streams exist), caches and branch predictors settle.
    for session in sessions {
        session.writePacket(into: buffer, payload: payload)
        let length = try session.sender.protectRTP(buffer, length: packetLength)
        _ = try session.receiver.unprotectRTP(buffer, length: length)
    }

    // Unprotect: protected packets made beforehand, in the same round-robin order, into one flat arena.
    let unprotectRounds = min(rounds, 200_000)
    let stride = packetLength + 16
    let arena = UnsafeMutableRawBufferPointer.allocate(byteCount: unprotectRounds * stride, alignment: 16)
    defer { arena.deallocate() }
    var lengths = [Int](repeating: 0, count: unprotectRounds)
    for round in 0..<unprotectRounds {
        let session = sessions[round % sessionCount]
        let slot = UnsafeMutableRawBufferPointer(rebasing: arena[(round * stride)..<((round + 1) * stride)])
        session.writePacket(into: slot, payload: payload)
        lengths[round] = try session.sender.protectRTP(slot, length: packetLength)
    }
    let unprotectStart = Clocks.now()
    for round in 0..<unprotectRounds {
        let session = sessions[round % sessionCount]
        let slot = UnsafeMutableRawBufferPointer(rebasing: arena[(round * stride)..<((round + 1) * stride)])
        _ = try session.receiver.unprotectRTP(slot, length: lengths[round])
    }
    let unprotect = Clocks.now().perPacket(since: unprotectStart, packets: unprotectRounds)

    // Protect after unprotect: the receivers have followed the senders so far; from here only senders move.
    let start = Clocks.now()
    for round in 0..<rounds {
        let session = sessions[round % sessionCount]
        session.writePacket(into: buffer, payload: payload)
        _ = try session.sender.protectRTP(buffer, length: packetLength)
    }
    return Measurement(protect: Clocks.now().perPacket(since: start, packets: rounds), unprotect: unprotect)
}

func formatted(_ cost: Cost) -> String {
    func number(_ value: Double) -> String {
        let text = String(Int(value.rounded()))
        return String(repeating: " ", count: max(0, 6 - text.count)) + text
    }
    return "cpu \(number(cost.cpu)) ns/packet (\(cost.cpu <= targetNanoseconds ? "within" : "OVER  ") the \(Int(targetNanoseconds)) ns target)"
        + "   wall \(number(cost.wall)) ns/packet"
}

func countMallocs(profile: SRTPProtectionProfile, operation: String) throws(SRTPError) {
    typealias TraceSwitch = @convention(c) () -> Void
    // libc_malloc_debug (preloaded) defines them as mtrace@GLIBC_2.2.5, the version C programs link against;
    // plain dlsym would find libc's default-version stub, which does nothing. dlvsym is not in Swift's Glibc.
    typealias VersionedLookup = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafePointer<CChar>) -> UnsafeMutableRawPointer?
    guard let lookupSymbol = dlsym(nil, "dlvsym") else {
        print("count-mallocs: dlvsym not found")
        exit(2)
    }
    let lookup = unsafeBitCast(lookupSymbol, to: VersionedLookup.self)
    guard let start = lookup(nil, "mtrace", "GLIBC_2.2.5"), let stop = lookup(nil, "muntrace", "GLIBC_2.2.5") else {
        print("count-mallocs: mtrace not found")
        exit(2)
    }
    let session = try ProbeSession(profile: profile)
    let payload = randomBytes(packetLength - 12)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
    let packets = 10_000
    var protected: [[UInt8]] = []
    protected.reserveCapacity(packets + 10)
    for _ in 0..<(packets + 10) {
        session.writePacket(into: buffer, payload: payload)
        let length = try session.sender.protectRTP(buffer, length: packetLength)
        protected.append(Array(buffer[0..<length]))
    }
    // Warm-up outside the trace: the receiver's stream is made here (that one allocates).
    for packet in protected.prefix(10) {
        buffer.copyBytes(from: packet)
        _ = try session.receiver.unprotectRTP(buffer, length: packet.count)
    }
    unsafeBitCast(start, to: TraceSwitch.self)()
    if operation == "protect" {
        for _ in 0..<packets {
            session.writePacket(into: buffer, payload: payload)
            _ = try session.sender.protectRTP(buffer, length: packetLength)
        }
    } else {
        for packet in protected.dropFirst(10) {
            buffer.copyBytes(from: packet)
            _ = try session.receiver.unprotectRTP(buffer, length: packet.count)
        }
    }
    // A control: one allocation of our own inside the trace, so that a count of 1 shows the trace works.
    let control = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
    unsafeBitCast(stop, to: TraceSwitch.self)()
    control.deallocate()
    print("count-mallocs \(profile) \(operation): \(packets) packets traced, and 1 control allocation")
}

let arguments = CommandLine.arguments
do {
    if arguments.count == 4, arguments[1] == "count-mallocs" {
        try countMallocs(profile: arguments[2] == "gcm" ? .aeadAES128GCM : .aes128CMHMACSHA1_80, operation: arguments[3])
    } else {
        let rounds = arguments.count > 1 ? Int(arguments[1]) ?? 400_000 : 400_000
        print("ParlorSRTP per \(packetLength)-byte RTP packet, \(rounds) packets per figure, release build")
        for profile in SRTPProtectionProfile.allCases {
            for sessionCount in [1, 4_000] {
                let result = try measure(profile: profile, sessionCount: sessionCount, rounds: rounds)
                let name = "\(profile) sessions \(sessionCount)"
                let label = name + String(repeating: " ", count: max(0, 40 - name.count))
                print("protect   \(label) \(formatted(result.protect))")
                print("unprotect \(label) \(formatted(result.unprotect))")
                let floor = OpenSSLFloor.measure(profile: profile == .aeadAES128GCM ? .gcm : .counterMode, sessionCount: sessionCount, rounds: rounds)
                print("  OpenSSL calls alone (the floor): \(formatted(floor))")
            }
        }
    }
} catch {
    print("parlor-srtp-probe: \(error)")
    exit(1)
}
