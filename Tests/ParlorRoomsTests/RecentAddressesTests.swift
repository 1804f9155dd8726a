import Testing
@testable import ParlorRooms

/// Issue 34, item 12: the addresses kept per user for bans are bounded in count, age and users.
@Suite struct RecentAddressesTests {
    @Test func keepsTheNewestFewAddressesOfADay() {
        var recent = RecentAddresses()
        for index in 0..<10 { recent.record("10.0.0.\(index)", for: "u", at: Int64(index)) }
        #expect(recent.addresses(of: "u", at: 10) == ["10.0.0.9", "10.0.0.8", "10.0.0.7", "10.0.0.6"])
        // Seeing an old address again makes it the newest instead of adding it twice.
        recent.record("10.0.0.7", for: "u", at: 20)
        #expect(recent.addresses(of: "u", at: 20) == ["10.0.0.7", "10.0.0.9", "10.0.0.8", "10.0.0.6"])
        recent.record(nil, for: "u", at: 21)
        #expect(recent.addresses(of: "u", at: 21).count == RecentAddresses.maxPerUser)
        // After a day without a sighting nothing is held against the user.
        #expect(recent.addresses(of: "u", at: 20 + RecentAddresses.maxAge) == ["10.0.0.7"])
        #expect(recent.addresses(of: "u", at: 21 + RecentAddresses.maxAge).isEmpty)
        #expect(recent.addresses(of: "nobody", at: 0).isEmpty)
    }

    @Test func forgetsTheLongestSilentUsersBeyondItsCap() {
        var recent = RecentAddresses()
        for index in 0...RecentAddresses.maxUsers { recent.record("10.0.0.1", for: "u\(index)", at: Int64(index)) }
        #expect(recent.userCount <= RecentAddresses.maxUsers)
        #expect(recent.addresses(of: "u0", at: Int64(RecentAddresses.maxUsers)).isEmpty, "the longest silent user went first")
        #expect(recent.addresses(of: "u\(RecentAddresses.maxUsers)", at: Int64(RecentAddresses.maxUsers)) == ["10.0.0.1"])
    }
}

/// The per-address chat rate leaves a member's own budget alone when it refuses (issue 34, item 6).
@Suite struct RateWindowTests {
    @Test func hasRoomAnswersWithoutRecording() {
        var window = RateWindow(.init(count: 2, milliseconds: 1_000))
        #expect(window.hasRoom(at: 0) && window.hasRoom(at: 0))
        #expect(window.admit(at: 0) && window.admit(at: 10))
        #expect(!window.hasRoom(at: 999))
        #expect(window.hasRoom(at: 1_000), "the first action left the window")
        #expect(!window.isIdle(at: 1_000) && window.isIdle(at: 1_010))
    }
}
