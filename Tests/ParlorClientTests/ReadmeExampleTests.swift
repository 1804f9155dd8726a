import Foundation
import Testing
import ParlorClient
import ParlorTesting
import ParlorTestServer

// README example: start
@Test func bobSeesAliceJoinAndDrop() async throws {
    try await withParlor { parlor in  // in-process server; every session and the server close at the end
        let room = try await parlor.createRoom("Standup")
        let bob = try await parlor.session(name: "bob")
        _ = try await bob.join(room.id)
        let bobSees = EventRecorder(bob)
        let alice = try await parlor.session(name: "alice")
        let membership = try await alice.join(room.id)
        try await bobSees.expect(.memberJoined(name: "alice"), within: .seconds(2))

        await alice.pauseReconnects()  // keep alice away past the 1 s grace period
        try await parlor.drop(roomID: room.id, memberID: membership.memberID)
        let left = try await bobSees.expect(.memberLeft(reason: .dropped, name: "alice"), within: .seconds(5))
        #expect(left.roomID == room.id)
    }
}
// README example: end

/// The README shows the example above verbatim: this fails when one changes without the other.
@Test func readmeShowsThisExample() throws {
    let testFile = try String(contentsOfFile: #filePath, encoding: .utf8)
    let readmeURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../README.md")
    let readme = try String(contentsOf: readmeURL.standardized, encoding: .utf8)
    let start = "// README example: start\n", end = "// README example: end"
    let example = try #require(testFile.range(of: start).flatMap { from in
        testFile.range(of: end, range: from.upperBound..<testFile.endIndex).map { testFile[from.upperBound..<$0.lowerBound] }
    })
    #expect(readme.contains("```swift\n" + example + "```\n"))
}
