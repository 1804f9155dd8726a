import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// Issue 34, item 14, against the `parlor` binary: a name of one letter and 120 combining marks (and chat of 4,000)
/// fitted every length cap and drew over the tiles around it. Now a character carries at most
/// `TextRules.maxCombiningMarks` marks, in user names, room display names and chat; real scripts still pass.
@Suite struct CombiningMarkTests {
    /// One letter with `count` marks that stack above and below it (none of them composes with the letter under NFC).
    static func stacked(_ count: Int) -> String {
        let marks: [Unicode.Scalar] = ["\u{0336}", "\u{0351}", "\u{0489}", "\u{0317}", "\u{035B}", "\u{0346}"]
        return "Z" + String(String.UnicodeScalarView((0..<count).map { marks[$0 % marks.count] }))
    }

    /// Names people really write, with the most marks their scripts put on one letter (decomposed Vietnamese too,
    /// which NFC folds).
    static let realNames = [
        "Nguye\u{0302}\u{0303}n Thi\u{0323} Minh Khai", "בְּרֵאשִׁית", "וַֽיְהִ֣י", "བསྒྲུབས", "ཧཱུྃ", "क्षत्रिय", "น้ำ", "Zoë Ångström",
    ]

    @Test func stackedMarksAreRefusedInNamesDisplayNamesAndChat() throws {
        let server = try ServerProcess(["--auth-rate", "0"])
        let port = server.port
        let zalgo = Self.stacked(120)
        #expect(zalgo.count == 1 && zalgo.utf8.count <= 256, "fits every length cap")
        let named = try RawConnection.oneRequest(port, "POST", "/auth", json: #"{"name":"\#(zalgo)"}"#)
        #expect(named.status == 400, "\(named.status) \(named.text)")
        #expect(named.errorCode == "request:error:invalid-field")
        #expect((named.object["detail"] as? String)?.contains("combining marks") == true, "\(named.text)")
        let room = try RawConnection.oneRequest(port, "POST", "/rooms", json: #"{"display_name":"\#(zalgo)"}"#)
        #expect(room.status == 400, "\(room.status) \(room.text)")
        #expect(room.errorCode == "request:error:invalid-field")
        #expect((room.object["detail"] as? String)?.contains("combining marks") == true, "\(room.text)")

        let roomID = try #require(try RawConnection.oneRequest(port, "POST", "/rooms", json: #"{"display_name":"Chat"}"#).object["id"] as? String)
        let alice = try TestWebSocket(port: port, token: try auth(port: port, name: "alice").jwt)
        _ = try alice.join(roomID)
        let chat = "a" + String(repeating: "\u{0336}", count: 4_000)
        #expect(chat.utf8.count <= 8 * 1024, "fits the chat caps")
        let refused = try alice.request("message:send", ["cid": roomID, "text": chat])
        #expect(errorCode(refused) == "message:error:invalid-text")
        #expect("\(refused)".contains("combining marks"), "\(refused)")
        let boundary = try alice.request("message:send", ["cid": roomID, "text": "ok " + Self.stacked(TextRules.maxCombiningMarks + 1)])
        #expect(errorCode(boundary) == "message:error:invalid-text")

        // Real writing, and a stack at the bound, still pass everywhere.
        for name in Self.realNames + [Self.stacked(TextRules.maxCombiningMarks)] {
            let accepted = try RawConnection.oneRequest(port, "POST", "/auth", json: #"{"name":"\#(name)"}"#)
            #expect(accepted.status == 200, "\(name): \(accepted.status) \(accepted.text)")
            #expect(try RawConnection.oneRequest(port, "POST", "/rooms", json: #"{"display_name":"\#(name)"}"#).status == 201, "\(name)")
        }
        // One message holds them all: chat is rate-limited per member.
        let text = (Self.realNames + [Self.stacked(TextRules.maxCombiningMarks)]).joined(separator: "\n")
        let sent = try alice.request("message:send", ["cid": roomID, "text": text])
        #expect(sent["type"] as? String == "message:send:success", "\(sent)")
        #expect(server.child.process.isRunning)
    }
}
