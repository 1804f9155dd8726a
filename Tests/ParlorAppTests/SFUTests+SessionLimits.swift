#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorMedia
import ParlorMediaClient
import Testing

/// Issue 34 item 2: media sessions were bounded only by connections × rooms (one identity: 16,000 sessions in 14 s,
/// RSS 33 → 236 MiB, not returned). Against the binary: caps per user and per address, sessions that never complete
/// ICE end after --media-setup-timeout, and the memory they held is returned.
@Suite struct SFUSessionLimitTests {
    @Test func mediaSessionsAreCappedPerUserAndAddressAndUnfinishedOnesExpire() throws {
        let server = try ServerProcess(["--media-setup-timeout", "1", "--max-media-sessions-per-ip", "25", "--message-rate", "0",
                                        "--media-offer-rate", "0"])
        _ = try server.readMediaPort()
        let hogToken = try TransportAttackTests.authToken(port: server.port, name: "hog")
        let rooms = try (0..<8).map { _ in try SFUAttackTests.createRoom(server, token: hogToken) }
        let certificate = try DTLSCertificate(commonName: "hog")
        func offer() -> String { mediaOffer(ice: ICECredentials.random(), fingerprint: certificate.fingerprint, ssrc: 7, slots: 1, sends: false) }
        let baseline = try server.residentBytes()

        // One user, three connections, each in the eight rooms: 24 offers, no STUN ever.
        let hog = try (0..<3).map { _ in try TestWebSocket(port: server.port, token: hogToken) }
        var answered = 0
        var refused: [String: Int] = [:]
        for socket in hog {
            for room in rooms {
                _ = try socket.join(room)
                let reply = try socket.request("media:offer", ["cid": room, "sdp": offer()])
                if reply["type"] as? String == "media:offer:success" { answered += 1 } else { refused[errorCode(reply) ?? "?", default: 0] += 1 }
            }
        }
        #expect(answered == 20, "the default --max-media-sessions-per-user is 20")
        #expect(refused == ["media:error:too-many-sessions": 4])

        // Another user from the same address: only 5 more fit under --max-media-sessions-per-ip 25.
        let other = try TestWebSocket(port: server.port, token: try TransportAttackTests.authToken(port: server.port, name: "other"))
        var otherAnswered = 0
        for room in rooms {
            _ = try other.join(room)
            let reply = try other.request("media:offer", ["cid": room, "sdp": offer()])
            if reply["type"] as? String == "media:offer:success" { otherAnswered += 1 } else { #expect(errorCode(reply) == "media:error:too-many-sessions") }
        }
        #expect(otherAnswered == 5)

        // None of them completes ICE: they end after the setup timeout, and the user may offer again.
        var again: [String: Any] = [:]
        let expired = server.eventually(timeout: 5) {
            again = (try? hog[0].request("media:offer", ["cid": rooms[0], "sdp": offer()])) ?? [:]
            return again["type"] as? String == "media:offer:success"
        }
        #expect(expired, "\(again)")
        #expect(try !ServerProcess.checksMemory || server.residentBytes() - baseline < 32 * ServerProcess.mebibyte)
    }
}
