import Foundation
import ParlorApp
import ParlorMedia
import Testing

/// `--media`, `--media-port`, `--media-address`, `--max-forwarded-speakers`: parsed, validated, and the executable
/// opening and announcing its UDP media port.
@Suite struct MediaOptionsTests {
    @Test func mediaOptionsAreParsedAndChecked() throws {
        let parsed = try AppConfiguration.parse(arguments: ["--media", "mesh", "--media-port", "40000", "--media-address", "192.0.2.7, 2001:db8::1",
                                                            "--max-forwarded-speakers", "3"], environment: [:])
        #expect(parsed.rooms.mediaMode == .mesh)
        #expect(parsed.mediaPort == 40000)
        #expect(parsed.mediaAddresses == ["192.0.2.7", "2001:db8::1"])
        #expect(parsed.rooms.maxForwardedSpeakers == 3)
        #expect(try AppConfiguration.parse(arguments: [], environment: ["PARLOR_MEDIA": "SFU"]).rooms.mediaMode == .sfu)
        #expect(try AppConfiguration.parse(arguments: [], environment: [:]).rooms.maxForwardedSpeakers == 8)
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--media", "p2p"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--max-forwarded-speakers", "33"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--max-forwarded-speakers", "0"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration.parse(arguments: ["--media-port", "70000"], environment: [:]) }
    }

    @Test func announcedAddressesGoIntoTheAnswerWithTheBoundPort() throws {
        try withServer({
            $0.mediaAddresses = ["192.0.2.7"]
            $0.rooms.maxForwardedSpeakers = 2
        }) { app in
            let media = try #require(app.media)
            #expect(media.candidates.map(\.description) == ["192.0.2.7:\(media.localAddress.port)"])
            // HTTP on loopback (behind a proxy) but a public media address: the UDP port listens everywhere.
            #expect(media.localAddress.host == "0.0.0.0" && media.localAddress.port != 0)
            #expect(media.configuration.slots == 2)
        }
        try withServer { app in
            let media = try #require(app.media)
            #expect(media.localAddress.host == "127.0.0.1")
            #expect(media.candidates == [media.localAddress])
        }
        #expect(throws: (any Error).self) { try withServer({ $0.mediaAddresses = ["media.example"] }) { _ in } }
    }

    @Test func serveOpensTheMediaPortAndSaysWhereOnItsSecondLine() throws {
        try withTemporaryDirectory { workDirectory in
            let child = try ExecutableTests.Child(["serve", "--host", "127.0.0.1", "--port", "0", "--database", ":memory:"], in: workDirectory)
            let listening = try child.readLine()
            _ = try ExecutableTests.port(fromListeningLine: listening)
            let line = try child.readLine()
            let prefix = "media on udp port "
            let port = try #require(line.hasPrefix(prefix) ? UInt16(line.dropFirst(prefix.count).prefix { $0.isNumber }) : nil, "line: \(line)")
            #expect(line == "media on udp port \(port), announced as 127.0.0.1:\(port)")

            // The port is open, and a binding request without credentials gets no answer (issue 34 item 4).
            let probe = try RawUDPSocket()
            try probe.send(STUNMessage(type: .bindingRequest, transactionID: Array(repeating: 9, count: 12)).serialized(fingerprint: true),
                           toPort: port)
            #expect(probe.receive(within: 0.3) == nil)

            #expect(kill(child.process.processIdentifier, SIGTERM) == 0)
            #expect(child.waitForExit() == 0, "stderr: \(child.errorOutput())")
        }
    }
}
