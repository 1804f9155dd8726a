import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// Issue 17's weaknesses around identity: name rules, secret comparisons, the admin token's place, revocation.
@Suite struct IdentityRulesTests {
    static let admin = "admin-token-for-tests-0123456789"

    // MARK: Names (FieldRules.text / TextRules)

    static let refusedNames: [(label: String, json: String, rule: String)] = [
        ("right-to-left override", #"al\u202Eice"#, "bidirectional"),
        ("left-to-right isolate", #"\u2066alice"#, "bidirectional"),
        ("left-to-right mark", #"alice\u200E"#, "bidirectional"),
        ("Arabic letter mark", #"al\u061Cice"#, "bidirectional"),
        ("zero-width space", #"al\u200Bice"#, "invisible"),
        ("zero-width joiner", #"al\u200Dice"#, "invisible"),
        ("word joiner", #"al\u2060ice"#, "invisible"),
        ("byte order mark", #"\uFEFFalice"#, "invisible"),
        ("soft hyphen", #"al\u00ADice"#, "invisible"),
        ("Hangul filler", #"\u3164"#, "invisible"),
        ("tag letter", #"alice\uDB40\uDC41"#, "tag"),
        ("cancel tag", #"alice\uDB40\uDC7F"#, "tag"),
        ("control character", #"al\u0007ice"#, "control"),
        ("line separator", #"al\u2028ice"#, "control"),
        ("65 characters", String(repeating: "a", count: 65), "characters"),
        ("30 characters of 11 bytes", String(repeating: #"a\u0301\u0302\u0303\u0304\u0305"#, count: 30), "bytes"),
    ]

    @Test func namesWithHiddenOrReorderingCharactersAreRefused() throws {
        try withServer { app in
            for name in Self.refusedNames {
                let response = try routed(app, "POST", "/auth", json: #"{"name":"\#(name.json)"}"#)
                #expect(response.status == 400, "\(name.label): \(response.status)")
                #expect(response.errorCode == "request:error:invalid-field", "\(name.label)")
                #expect((response.object["detail"] as? String)?.contains(name.rule) == true, "\(name.label): \(response.text)")
                let room = try routed(app, "POST", "/rooms", json: #"{"display_name":"\#(name.json)"}"#)
                if name.label != "65 characters" && name.label != "30 characters of 11 bytes" {
                    #expect(room.status == 400, "display name with \(name.label): \(room.status)")
                }
            }
            // Within the caps: 64 emoji are 256 bytes; a display name of 100 such characters is 400 bytes.
            #expect(try routed(app, "POST", "/auth", json: #"{"name":"\#(String(repeating: "😀", count: 64))"}"#).status == 200)
            #expect(try routed(app, "POST", "/rooms", json: #"{"display_name":"\#(String(repeating: "😀", count: 100))"}"#).status == 201)
            #expect(try routed(app, "POST", "/rooms", json: #"{"display_name":"\#(String(repeating: "😀", count: 101))"}"#).status == 400)
        }
    }

    @Test func aSixtyKilobyteNameIsRefused() throws {
        try withServer { app in
            // 60,002 bytes but one character (a letter with 30,000 combining accents): a character count alone lets it in.
            let huge = "a" + String(repeating: "\u{0301}", count: 30_000)
            #expect(huge.count == 1)
            let auth = try routed(app, "POST", "/auth", json: #"{"name":"\#(huge)"}"#)
            #expect(auth.status == 400)
            #expect(auth.errorCode == "request:error:invalid-field")
            #expect(try routed(app, "POST", "/rooms", json: #"{"display_name":"\#(huge)"}"#).status == 400)
            #expect(try routed(app, "GET", "/rooms").text == "[]")
        }
    }

    @Test func namesAreNFCNormalised() throws {
        try withServer { app in
            let decomposed = try routed(app, "POST", "/auth", json: #"{"name":"Cafe\u0301"}"#)
            let composed = try routed(app, "POST", "/auth", json: #"{"name":"Caf\u00E9"}"#)
            #expect(decomposed.object["name"] as? String == "Caf\u{E9}")
            #expect(Array((decomposed.object["name"] as? String ?? "").unicodeScalars) == Array("Caf\u{E9}".unicodeScalars))
            #expect(composed.object["user_id"] as? String == decomposed.object["user_id"] as? String, "one user, however the name is encoded")
        }
    }

    // MARK: Secrets compared in full; the admin token only in the header

    @Test func trailingNULsDoNotPassForTheAccessCode() throws {
        let code = "open-sesame"
        try withServer({ $0.access = .code; $0.accessCode = code }) { app in
            let padded = code + String(repeating: #"\u0000"#, count: 256)
            let forged = try routed(app, "POST", "/auth", json: #"{"name":"mallory","code":"\#(padded)"}"#)
            #expect(forged.status == 403)
            #expect(forged.errorCode == "auth:error:invalid-code")
            let longer = code + String(repeating: #"\u0000"#, count: 512)
            #expect(try routed(app, "POST", "/auth", json: #"{"name":"mallory","code":"\#(longer)"}"#).status == 403)
            #expect(try routed(app, "POST", "/auth", json: #"{"name":"alice","code":"\#(code)"}"#).status == 200)
        }
    }

    @Test func theAdminTokenCountsOnlyInTheAuthorizationHeader() throws {
        try withServer({ $0.adminToken = Self.admin }) { app in
            _ = try token(app, "mallory")
            let inQuery = try routed(app, "POST", "/users/mallory/revoke?token=\(Self.admin)")
            #expect(inQuery.status == 403)
            #expect(inQuery.errorCode == "auth:error:admin-required")
            let room = try createRoom(app)
            #expect(try routed(app, "DELETE", "/rooms/\(room)?token=\(Self.admin)").status == 401)
            #expect(try routed(app, "DELETE", "/rooms/\(room)", headers: ["Authorization": "Bearer \(Self.admin)"]).status == 204)
        }
    }

    // MARK: Revocation holds

    @Test func aRevokedUserIsBlockedAndItsMembershipsEnd() throws {
        try withServer({ $0.adminToken = Self.admin }) { app in
            let members = try TwoMembers(app)
            let (room, alice, bob, bobMember) = (members.room, members.alice, members.bob, members.bobMember)
            let revoked = try http(app, "POST", "/users/bob/revoke", headers: ["Authorization": "Bearer \(Self.admin)"])
            #expect(revoked.status == 200)
            #expect(revoked.object["connections"] as? Int == 1)
            // The others see bob leave, in the same operation.
            let left = try alice.event("member:left", in: room, member: bobMember)
            #expect((left["body"] as? [String: Any])?["reason"] as? String == "kicked")
            #expect(try bob.closeCode() == 4003)
            #expect(memberNames(try alice.call("conversation:members", ["cid": room])) == ["alice"])

            // A fresh /auth for bob, with or without his claim, is refused during the block.
            let again = try http(app, "POST", "/auth", json: #"{"name":"bob"}"#)
            #expect(again.status == 403)
            #expect(again.errorCode == "auth:error:blocked")
            #expect((again.object["detail"] as? String)?.contains("blocked until") == true)
            #expect(throws: TestFailure.self) { try token(app, "bob") }
            // So is a token minted for him after the revocation (closed mode's way in).
            let minted = try TokenService(secret: Array("parlor-test-secret-parlor-test-secret".utf8), timeToLiveSeconds: 600)
                .issue(name: "bob", now: Int64(Date().timeIntervalSince1970) + 2).token
            let refused = try http(app, "GET", "/rooms", headers: ["Authorization": "Bearer \(minted)"])
            #expect(refused.status == 401)
            #expect((refused.object["detail"] as? String)?.contains("blocked") == true)
            // Others are not affected.
            #expect(try http(app, "POST", "/auth", json: #"{"name":"carol"}"#).status == 200)
        }
    }

    @Test func withoutABlockARevokedUserMayComeBackAtOnce() throws {
        try withServer({ $0.adminToken = Self.admin; $0.revokeBlockSeconds = 0 }) { app in
            _ = try token(app, "bob")
            #expect(try http(app, "POST", "/users/bob/revoke", headers: ["Authorization": "Bearer \(Self.admin)"]).status == 200)
            #expect(try http(app, "POST", "/auth", json: #"{"name":"bob"}"#).status == 200)
        }
    }
}
