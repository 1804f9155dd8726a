#if canImport(Glibc)
import Glibc
#endif
import CParlorSystem
import Foundation
import ParlorLoop
import ParlorMedia
import ParlorSRTP

/// The floors a forwarded packet is compared with, measured in the same run:
/// - `udpMicroseconds`: one datagram of the forwarded size sent with `sendmmsg` (32 per call, round-robin to
///   `sockets` loopback sockets, a reader loop draining them with `recvmmsg`), timed by the sender thread's CPU
///   clock. On loopback the sender's system call also runs the receiver's UDP input, as the server's does.
/// - `srtpMicroseconds`: one ParlorSRTP protect of an RTP packet of the forwarded size with the profile the run
///   negotiated (`SRTPSender.protectRTP`, the server's call), timed the same way, round-robin over one session per
///   floor socket (each subscriber has its own key, so the server's protects are spread the same way);
///   `srtpOneSessionMicroseconds` is the same with a single session, whose key stays in cache.
struct FloorResult: Codable {
    var datagramBytes: Int
    var udpDatagrams: Int
    var udpMicroseconds: Double
    var udpRounds: [Double]
    var srtpProfile: String
    var srtpPackets: Int
    var srtpMicroseconds: Double
    var srtpRounds: [Double]
    var srtpOneSessionMicroseconds: Double
}

enum FloorProbe {
    /// Three rounds of each, `seconds` in all per floor, alternating; a floor is the least a round measured (other
    /// work on the machine only ever adds to a round), and every round is kept.
    static func run(datagramBytes: Int, rtpBytes: Int, profile: SRTPProtectionProfile, sockets: Int, seconds: Double, rate: Int) throws -> FloorResult {
        var udpRounds: [Double] = [], srtpRounds: [Double] = [], oneSession: [Double] = [], datagrams = 0, packets = 0
        for _ in 0..<3 {
            let (sent, udp) = try udpFloor(datagramBytes: datagramBytes, sockets: sockets, seconds: seconds / 3, rate: rate)
            let (protected, srtp) = try srtpFloor(rtpBytes: rtpBytes, profile: profile, sessions: sockets, seconds: seconds / 3)
            oneSession.append(try srtpFloor(rtpBytes: rtpBytes, profile: profile, sessions: 1, seconds: seconds / 6).1)
            datagrams += sent
            packets += protected
            udpRounds.append(udp)
            srtpRounds.append(srtp)
        }
        return FloorResult(datagramBytes: datagramBytes, udpDatagrams: datagrams, udpMicroseconds: udpRounds.min() ?? 0, udpRounds: udpRounds,
                           srtpProfile: "\(profile)", srtpPackets: packets, srtpMicroseconds: srtpRounds.min() ?? 0, srtpRounds: srtpRounds,
                           srtpOneSessionMicroseconds: oneSession.min() ?? 0)
    }

    /// Datagrams sent and µs of sender CPU per datagram, paced at `rate` datagrams per second.
    static func udpFloor(datagramBytes: Int, sockets: Int, seconds: Double, rate: Int) throws -> (Int, Double) {
        let reader = try EventLoop(name: "media-bench-floor-rx")
        reader.start()
        defer { reader.stop(); reader.waitUntilStopped() }
        let local = TransportAddress(host: "127.0.0.1", port: 0)!
        let receivers: [TransportAddress] = try reader.submitAndWait {
            Result { () throws -> [TransportAddress] in
                try (0..<sockets).map { _ in
                    let socket = try UDPSocket(loop: reader, bindingTo: local) { _, _ in }
                    try socket.start()
                    FloorSockets.keep(socket)
                    return socket.localAddress
                }
            }
        }.get()
        defer { _ = reader.submitAndWait { FloorSockets.closeAll(); return true } }

        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        defer { close(fd) }
        let batch = Int(UDPSocket.batchSize)
        let bytes = [UInt8](repeating: 0xA5, count: datagramBytes * batch)
        let offsets = (0..<batch).map { UInt32($0 * datagramBytes) }
        let lengths = [UInt32](repeating: UInt32(datagramBytes), count: batch)
        let addresses = receivers.map(\.storage)
        var destinations = [sockaddr_storage](repeating: sockaddr_storage(), count: batch)
        var destinationLengths = [socklen_t](repeating: 0, count: batch)
        var sent = 0
        var cursor = 0
        let started = MonotonicClock.now()
        let cpuStart = threadCPUSeconds()
        let end = started + UInt64(seconds * 1e9)
        while true {
            let now = MonotonicClock.now()
            if now >= end { break }
            let due = Int(Double(now - started) / 1e9 * Double(rate))
            if sent >= due {
                var pause = timespec(tv_sec: 0, tv_nsec: 200_000)
                nanosleep(&pause, nil)
                continue
            }
            for index in 0..<batch {
                (destinations[index], destinationLengths[index]) = addresses[cursor]
                cursor = (cursor + 1) % addresses.count
            }
            let count = parlor_udp_send_batch(fd, bytes, offsets, lengths, destinations, destinationLengths, UInt32(batch))
            if count > 0 { sent += Int(count) }
        }
        let cpu = threadCPUSeconds() - cpuStart
        return (sent, sent > 0 ? cpu / Double(sent) * 1e6 : 0)
    }

    /// Packets protected and µs of CPU per protect, for `seconds`, round-robin over `sessions` sessions.
    static func srtpFloor(rtpBytes: Int, profile: SRTPProtectionProfile, sessions count: Int, seconds: Double) throws -> (Int, Double) {
        let sessions = try (0..<count).map { _ in
            try SRTPSender(profile: profile, keyingMaterial: (0..<profile.keyingMaterialLength).map { _ in UInt8.random(in: 0...255) })
        }
        // The speakers' packet: header, the audio-level extension, then filler.
        var plain: [UInt8] = [0x90, 111, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0xBE, 0xDE, 0x00, 0x01, 0x10, 0x9E, 0x00, 0x00]
        plain += [UInt8](repeating: 0xA5, count: max(0, rtpBytes - plain.count))
        plain.reserveCapacity(rtpBytes + SRTPProtectionProfile.largestOverhead)
        var packet = plain
        packet.reserveCapacity(rtpBytes + SRTPProtectionProfile.largestOverhead)
        var sequence: UInt32 = 0
        var done = 0
        let cpuStart = threadCPUSeconds()
        var cpu = 0.0
        // At least 1,000 protects between clock reads (reading the thread's CPU clock is a system call).
        while cpu < seconds {
            for _ in 0..<max(1, 1000 / sessions.count) {
                for session in sessions {
                    packet.removeAll(keepingCapacity: true)
                    packet.append(contentsOf: plain)
                    packet[2] = UInt8(truncatingIfNeeded: sequence >> 8)
                    packet[3] = UInt8(truncatingIfNeeded: sequence)
                    try session.protectRTP(&packet)
                }
                sequence &+= 1  // each session sees every sequence number once (a sender refuses a repeated index)
                done += sessions.count
            }
            cpu = threadCPUSeconds() - cpuStart
        }
        return (done, cpu / Double(done) * 1e6)
    }
}

/// The floor's receiving sockets, alive until the probe ends (reader loop thread only).
private enum FloorSockets {
    nonisolated(unsafe) static var sockets: [UDPSocket] = []  // touched only on the floor reader loop
    static func keep(_ socket: UDPSocket) { sockets.append(socket) }
    static func closeAll() {
        for socket in sockets { socket.close() }
        sockets.removeAll()
    }
}
