@testable import ParlorApp
import ParlorMedia
import ParlorSRTP
import Testing

/// Issue 36 item 1: the forwarding unit protects with ParlorSRTP. Each SRTP profile forced in turn
/// (`--srtp-profiles`, here its configuration field) carries a speaker's audio to a listener, and by default a client
/// offering both gets AEAD_AES_128_GCM, the cheaper one.
@Suite struct SFUProfileTests {
    @Test(arguments: [[SRTPProtectionProfile.aeadAES128GCM], [.aes128CMHMACSHA1_80], SRTPProtectionProfile.preferenceOrder])
    func audioIsForwardedUnderTheProfileTheServerPrefers(profiles: [SRTPProtectionProfile]) throws {
        try withServer({ $0.srtpProfiles = profiles }) { app in
            let harness = try SFUTests.Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let bob = try harness.join(room, "bob", speaker: false)
            _ = try SFUTests.slots(bob.socket, room, carrying: alice.member)
            #expect(alice.media.profile == profiles[0])
            #expect(bob.media.profile == profiles[0])
            let sent = SFUTests.payload("alice under \(profiles[0])")
            try alice.media.send(sent, level: 40)
            let received = try bob.media.waitForPacket { $0.payload == sent }
            #expect(received.map(\.payload) == [sent])
        }
    }

    @Test func srtpProfilesAreParsedInOrderAndChecked() throws {
        #expect(try AppConfiguration.parse(arguments: [], environment: [:]).srtpProfiles == [.aeadAES128GCM, .aes128CMHMACSHA1_80])
        let forced = try AppConfiguration.parse(arguments: ["--srtp-profiles", "AES_CM_128_HMAC_SHA1_80"], environment: [:])
        #expect(forced.srtpProfiles == [.aes128CMHMACSHA1_80])
        #expect(try forced.mediaServerConfiguration(httpPort: 0).srtpProfiles == [.aes128CMHMACSHA1_80])
        let reordered = try AppConfiguration.parse(arguments: [], environment: ["PARLOR_SRTP_PROFILES": " AES_CM_128_HMAC_SHA1_80 , AEAD_AES_128_GCM"])
        #expect(reordered.srtpProfiles == [.aes128CMHMACSHA1_80, .aeadAES128GCM])
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--srtp-profiles", "SRTP_AES128_CM_SHA1_80"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--srtp-profiles", ","], environment: [:]) }
    }
}
