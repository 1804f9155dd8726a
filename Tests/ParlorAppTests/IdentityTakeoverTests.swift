import Foundation
import Testing
import ParlorApp

/// Issue 17, vulnerability 3, against the `parlor` binary: POST /auth with the name of someone in live use used to
/// hand over their identity (same user, same member id, their offers, their leave). Now only the claim secret the
/// first /auth returned gets an identity in live use back; anyone else gets a separate identity with the same name.
@Suite struct IdentityTakeoverTests {
    static func bearerFor(_ jwt: String) -> [String: String] { ["Authorization": "Bearer \(jwt)"] }

    @Test func aNameInLiveUseIsNotHandedToSomeoneWithoutItsClaim() throws {
        let server = try ServerProcess(["--grace-period", "0.5", "--auth-rate", "0"])
        let port = server.port
        let room = try #require(try ClaimsAttackTests.request(port, "POST", "/rooms", json: #"{"display_name":"R"}"#).object["id"] as? String)
        let alice = try auth(port: port, name: "alice")
        let victim = try TestWebSocket(port: port, token: alice.jwt)
        let victimMember = try #require(try victim.join(room)["member_id"] as? String)
        let witness = try TestWebSocket(port: port, token: try auth(port: port, name: "bob").jwt)
        let witnessMember = try #require(try witness.join(room)["member_id"] as? String)

        // The attacker asks for "alice" without the claim: a different user, shown with the same name.
        let forged = try auth(port: port, name: "alice")
        #expect(forged.userID != alice.userID)
        #expect(forged.claim != alice.claim)
        let attacker = try TestWebSocket(port: port, token: forged.jwt)
        #expect(attacker.userID == forged.userID)
        let attackerMember = try #require(try attacker.join(room)["member_id"] as? String)
        #expect(attackerMember != victimMember, "the attacker must not be attached to alice's membership")
        // Everyone sees the attacker arrive as a member of its own.
        let arrived = try victim.event("member:joined", in: room, member: attackerMember)
        #expect(((arrived["body"] as? [String: Any])?["user"] as? [String: Any])?["id"] as? String == forged.userID)

        // An offer addressed to alice's member reaches alice, not the attacker.
        _ = try witness.call("rtc:offer", ["cid": room, "to": victimMember, "sdp": "v=0 for alice"])
        let offer = try victim.next { $0["type"] as? String == "rtc:offer" }
        #expect((offer["body"] as? [String: Any])?["sdp"] as? String == "v=0 for alice")
        try attacker.sync()
        #expect(!attacker.log.contains { $0["type"] as? String == "rtc:offer" })

        // The attacker's leave ends its own membership only: alice is still there, and saw no member:left of hers.
        _ = try attacker.call("conversation:leave", ["cid": room])
        _ = try victim.event("member:left", in: room, member: attackerMember)
        try victim.sync()
        #expect(!victim.log.contains { $0["type"] as? String == "member:left" && ($0["body"] as? [String: Any])?["member_id"] as? String == victimMember })
        let listed = try ClaimsAttackTests.request(port, "GET", "/rooms/\(room)/members", headers: Self.bearerFor(alice.jwt))
        #expect(Set(members(listed.object).compactMap { $0["member_id"] as? String }) == [victimMember, witnessMember])

        // The holder, with its claim, gets the same identity, and a second connection shares the membership.
        let back = try auth(port: port, name: "alice", claim: alice.claim)
        #expect(back.userID == alice.userID)
        let secondDevice = try TestWebSocket(port: port, token: back.jwt)
        #expect(try secondDevice.join(room)["member_id"] as? String == victimMember)
        #expect(server.child.process.isRunning)
    }

    @Test func aNameNotInLiveUseMayBeTakenAndItsOldTokensEnd() throws {
        let server = try ServerProcess(["--auth-rate", "0"])
        let port = server.port
        let first = try auth(port: port, name: "carol")
        #expect(try ClaimsAttackTests.request(port, "GET", "/rooms", headers: Self.bearerFor(first.jwt)).status == 200)
        // Nobody uses "carol" (no session, no membership): anyone may take it, and gets the same user.
        let taker = try auth(port: port, name: "carol")
        #expect(taker.userID == first.userID)
        #expect(taker.claim != first.claim)
        #expect(try ClaimsAttackTests.request(port, "GET", "/rooms", headers: Self.bearerFor(taker.jwt)).status == 200)
        // Whoever held it before cannot come back later with an old token, or the old claim, to take the new holder's place.
        let stale = try ClaimsAttackTests.request(port, "GET", "/rooms", headers: Self.bearerFor(first.jwt))
        #expect(stale.status == 401)
        #expect(stale.object["detail"] as? String == "invalid token: the token was revoked")
        let connected = try TestWebSocket(port: port, token: taker.jwt)
        #expect(connected.userID == first.userID)
        #expect(try auth(port: port, name: "carol", claim: first.claim).userID != first.userID, "the old claim proves nothing any more")
    }

    /// The tutorial app keeps no claim: relaunched while its old connection is still in its grace period, it gets a
    /// working token for a new identity, and the old membership drops when the grace period ends.
    @Test func relaunchWithoutAClaimGetsAWorkingNewIdentityAndTheOldMembershipDrops() throws {
        let server = try ServerProcess(["--grace-period", "0.5", "--auth-rate", "0"])
        let port = server.port
        let room = try #require(try ClaimsAttackTests.request(port, "POST", "/rooms", json: #"{"display_name":"R"}"#).object["id"] as? String)
        let witness = try TestWebSocket(port: port, token: try auth(port: port, name: "bob").jwt)
        _ = try witness.join(room)
        let launch = try auth(port: port, name: "dana")
        let before = try TestWebSocket(port: port, token: launch.jwt)
        let oldMember = try #require(try before.join(room)["member_id"] as? String)
        before.drop()

        let relaunch = try ClaimsAttackTests.request(port, "POST", "/auth", json: #"{"name":"dana"}"#)
        #expect(relaunch.status == 200)
        #expect(relaunch.object["name"] as? String == "dana")
        let jwt = try #require(relaunch.object["jwt"] as? String)
        #expect(relaunch.object["user_id"] as? String != launch.userID)
        let after = try TestWebSocket(port: port, token: jwt)
        let newMember = try #require(try after.join(room)["member_id"] as? String)
        #expect(newMember != oldMember)
        let left = try witness.event("member:left", in: room, member: oldMember)
        #expect((left["body"] as? [String: Any])?["reason"] as? String == "dropped")
        let names = members(try ClaimsAttackTests.request(port, "GET", "/rooms/\(room)/members", headers: Self.bearerFor(jwt)).object)
            .compactMap { ($0["user"] as? [String: Any])?["name"] as? String }
        #expect(names.sorted() == ["bob", "dana"])
    }
}
