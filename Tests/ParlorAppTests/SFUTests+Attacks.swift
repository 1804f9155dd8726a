#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorMedia
import Testing

/// Attacks on the media port of the real `parlor` binary (issue 34), with CPU and memory read from /proc.
@Suite struct SFUAttackTests {
    static let admin = "admin-token-for-the-media-attack-tests"

    /// Issue 34 item 4: a 28-byte binding request without USERNAME got a 48-byte 400 (1.71×), and a wrong USERNAME a
    /// 401: a reflector for spoofed sources. Now nothing unauthenticated is answered, and the drops are counted.
    @Test func unauthenticatedSTUNIsDroppedUnansweredAndCounted() throws {
        let server = try ServerProcess(["--admin-token", Self.admin])
        let mediaPort = try server.readMediaPort()
        let socket = try RawUDPSocket()
        let bare = STUNMessage(type: .bindingRequest, transactionID: Array(repeating: 9, count: 12)).serialized(fingerprint: true)
        #expect(bare.count == 28)
        let wrong = STUNMessage(type: .bindingRequest, transactionID: Array(repeating: 8, count: 12), attributes: [.username("nobody:x")])
            .serialized(integrityKey: Array("not a password".utf8), fingerprint: true)
        try socket.send(bare, toPort: mediaPort)
        try socket.send(wrong, toPort: mediaPort)
        #expect(socket.receive(within: 0.5) == nil)

        // A bounded flood: 20,000 requests, then whatever comes back.
        let cpuBefore = try server.cpuSeconds()
        var sent = 2
        for index in 0..<20_000 {
            try socket.send(index % 2 == 0 ? bare : wrong, toPort: mediaPort)
            sent += 1
        }
        let replies = socket.drain(quietFor: 0.5)
        let cpu = try server.cpuSeconds() - cpuBefore
        #expect(replies.isEmpty, "\(replies.count) replies, \(replies.reduce(0, +)) bytes")
        // Counted (the kernel may drop some of the burst before the server reads it).
        let counted = try server.metric("parlor_media_stun_unauthenticated_total", admin: Self.admin)
        #expect(counted > sent / 4, "\(counted) of \(sent) counted")
        #expect(counted <= sent)
        #expect(cpu < 1.5, "\(cpu) s of CPU for \(sent) datagrams")
    }
}
