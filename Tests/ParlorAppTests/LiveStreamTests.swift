#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorRecording
import Testing

/// Issue 38's live stream end to end: a member speaks a tone through the forwarding unit and GET /rooms/{id}/live.ogg
/// carries it, read by Debian's `ffmpeg` and by plain sockets; one mix for any number of listeners; the delay; who may
/// listen; room:stream:public and room:stream.
@Suite(.serialized) struct LiveStreamTests {
    @Test func ffmpegReadsFiveSecondsOfTheStreamAndHearsTheTone() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else {
            Issue.record("ffmpeg is missing (Debian's ffmpeg; make test installs it)")
            return
        }
        try withRecordingServer(.sqlite) { app in
            let (harness, room, _, jwt) = try Self.speakingRoom(app)
            defer { withExtendedLifetime(harness) {} }

            let ffmpeg = Process()
            ffmpeg.executableURL = URL(filePath: "/usr/bin/ffmpeg")
            ffmpeg.arguments = ["-nostdin", "-loglevel", "error", "-i", "http://127.0.0.1:\(app.port)/rooms/\(room)/live.ogg?token=\(jwt)",
                                "-t", "5", "-f", "s16le", "-ac", "1", "-ar", "48000", "-"]
            let output = Pipe(), errors = Pipe()
            ffmpeg.standardOutput = output
            ffmpeg.standardError = errors
            try ffmpeg.run()
            let pcm = output.fileHandleForReading.readDataToEndOfFile()
            let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            ffmpeg.waitUntilExit()
            #expect(ffmpeg.terminationStatus == 0, "ffmpeg: \(errorText)")
            let samples = pcm.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            let seconds = Double(samples.count) / 48_000
            #expect(seconds > 4.9 && seconds < 5.1, "\(seconds) s decoded")
            // The last second: the tone against a neighbour 150 Hz away.
            let last = Array(samples.suffix(48_000))
            let tone = RecordingAudioTests.goertzel(last, 450), other = RecordingAudioTests.goertzel(last, 600)
            #expect(tone > 20 * other, "450 Hz power \(tone), 600 Hz \(other)")
            #expect(app.metrics.streamBytes.load() > 0)
        }
    }

    @Test func twoReadersGetTheSameStreamFromOneMixAndTheRoomHearsTheCount() throws {
        try withRecordingServer(.sqlite) { app in
            let (harness, room, alice, jwt) = try Self.speakingRoom(app)
            defer { withExtendedLifetime(harness) {} }

            let first = try LiveReader(port: app.port, path: "/rooms/\(room)/live.ogg", headers: ["Authorization": "Bearer \(jwt)"])
            let second = try LiveReader(port: app.port, path: "/rooms/\(room)/live.ogg", headers: ["Authorization": "Bearer \(jwt)"])
            #expect(first.status == 200 && second.status == 200)
            #expect(first.head.contains("Content-Type: audio/ogg") && first.head.contains("Transfer-Encoding: chunked"))
            // Each reads a second of pages; meanwhile both listen, with one mix.
            let firstChunks = try first.readChunks(for: 1.0)
            let secondChunks = try second.readChunks(for: 1.0)
            #expect(app.metrics.liveMixes.load() == 1)
            #expect(app.metrics.liveListeners.load() == 2)
            let firstPages = pages(firstChunks.flatMap(\.bytes)), secondPages = pages(secondChunks.flatMap(\.bytes))
            // Both begin with the same OpusHead and OpusTags pages.
            #expect(firstPages.count > 3 && secondPages.count > 3)
            #expect(firstPages.prefix(2) == secondPages.prefix(2))
            #expect(firstPages.first.map { Array($0[28..<36]) } == Array("OpusHead".utf8))
            // From a page both have on, the same bytes: one encoder's output.
            let common = firstPages.dropFirst(2).filter { page in secondPages.dropFirst(2).contains(page) }
            #expect(common.count >= 2, "\(common.count) pages in common")
            if let start = firstPages.firstIndex(of: common.first ?? []), let other = secondPages.firstIndex(of: common.first ?? []) {
                let length = min(firstPages.count - start, secondPages.count - other)
                #expect(Array(firstPages[start..<(start + length)]) == Array(secondPages[other..<(other + length)]))
            }

            let counted = try alice.socket.next { message in
                message["type"] as? String == "room:stream" && ((message["body"] as? [String: Any])?["listeners"] as? Int) == 2
            }
            #expect((counted["body"] as? [String: Any])?["public"] as? Bool == false)
            first.close()
            second.close()
            _ = try alice.socket.next { message in
                message["type"] as? String == "room:stream" && ((message["body"] as? [String: Any])?["listeners"] as? Int) == 0
            }
            #expect(app.metrics.liveMixes.load() == 0)
            #expect(app.metrics.liveListeners.load() == 0)
        }
    }

    @Test func aToneThatStartsIsHeardInTheStreamWithinTwoSeconds() throws {
        try withRecordingServer(.sqlite) { app in
            let harness = try SFUTests.Harness(app)
            let room = try createRoom(app)
            let alice = try harness.join(room, "alice", speaker: true)
            let reader = try LiveReader(port: app.port, path: "/rooms/\(room)/live.ogg?token=\(try token(app, "alice"))")
            let before = try reader.readChunks(count: 1)
            let startedAt = Date()
            try alice.media.startStreaming(try RecordingAudioTests.tonePacket(hertz: 450), level: 30)
            let after = try reader.readChunks(for: 3.0)
            reader.close()
            // Each chunk is whole pages: decode the stream up to each one and find the first that holds the tone.
            var stream = before.flatMap(\.bytes)
            var previousSamples = try decodedSamples(stream).count
            var heardAt: Date?
            for chunk in after {
                stream += chunk.bytes
                let samples = try decodedSamples(stream)
                let fresh = Array(samples[previousSamples...])
                previousSamples = samples.count
                guard fresh.count >= 4_800 else { continue }
                let tone = RecordingAudioTests.goertzel(fresh, 450), other = RecordingAudioTests.goertzel(fresh, 600)
                if tone > 20 * other, tone > 1e9 {
                    heardAt = chunk.arrival
                    break
                }
            }
            let delay = try #require(heardAt, "the tone never reached the stream").timeIntervalSince(startedAt)
            #expect(delay <= 2.0, "heard after \(delay) s")
        }
    }

    @Test func whoMayListenAndWhoMayMakeTheStreamPublic() throws {
        try withRecordingServer(.sqlite) { app in
            let aliceToken = try token(app, "alice")
            let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Live"}"#, headers: ["Authorization": "Bearer \(aliceToken)"])
            let room = try #require(created.object["id"] as? String)
            let alice = try TestWebSocket(app, name: "alice")
            let joined = try alice.join(room)
            #expect(joined["stream"] == nil, "an open room's join reply says nothing of a stream nobody hears")
            let bobToken = try token(app, "bob")
            let path = "/rooms/\(room)/live.ogg"

            let anonymous = try http(app, "GET", path)
            #expect(anonymous.status == 401 && anonymous.errorCode == "auth:error:missing-token", "\(anonymous.status) \(anonymous.text)")
            #expect(anonymous.object["title"] is String && anonymous.object["detail"] is String)
            let stranger = try http(app, "GET", path, headers: ["Authorization": "Bearer \(bobToken)"])
            #expect(stranger.status == 403 && stranger.errorCode == "room:error:forbidden", "\(stranger.status) \(stranger.text)")
            let forged = try http(app, "GET", path + "?token=not.a.jwt")
            #expect(forged.status == 401 && forged.errorCode == "auth:error:invalid-token", "\(forged.status) \(forged.text)")
            let unknown = try http(app, "GET", "/rooms/no-such-room/live.ogg", headers: ["Authorization": "Bearer \(aliceToken)"])
            #expect(unknown.status == 404 && unknown.errorCode == "room:error:not-found")

            // Bob joins but did not create the open room: he may not open its stream.
            let bob = try TestWebSocket(app, name: "bob")
            _ = try bob.join(room)
            let refused = try bob.request("room:stream:public", ["cid": room, "public": true])
            #expect(errorCode(refused) == "member:error:not-allowed", "\(refused)")
            #expect(errorCode(try alice.request("room:stream:public", ["cid": room])) == "request:error:missing-field")
            #expect(errorCode(try alice.request("room:stream:public", ["cid": room, "public": "yes"])) == "request:error:invalid-field")
            // Alice, its creator, may: everyone hears room:stream, and then anyone may listen without a token.
            let reply = try alice.call("room:stream:public", ["cid": room, "public": true])
            #expect(reply["public"] as? Bool == true)
            let event = try bob.event("room:stream", in: room)
            #expect((event["body"] as? [String: Any])?["public"] as? Bool == true)
            let carol = try TestWebSocket(app, name: "carol")
            #expect((try carol.join(room)["stream"] as? [String: Any])?["public"] as? Bool == true)
            let open = try LiveReader(port: app.port, path: path)
            #expect(open.status == 200)
            _ = try open.readChunks(count: 1)
            let bobListens = try LiveReader(port: app.port, path: path + "?token=\(bobToken)")
            _ = try bobListens.readChunks(count: 1)

            // Members-only again: the listener without a token is cut off (the last chunk, then the close); bob, a
            // member, listens on until he leaves the room.
            _ = try alice.call("room:stream:public", ["cid": room, "public": false])
            #expect(try open.readToLastChunk())
            open.close()
            _ = try bobListens.readChunks(count: 1)
            _ = try bob.call("conversation:leave", ["cid": room])
            #expect(try bobListens.readToLastChunk())
            bobListens.close()

            // Closing the room ends its stream.
            let aliceListens = try LiveReader(port: app.port, path: path, headers: ["Authorization": "Bearer \(aliceToken)"])
            _ = try aliceListens.readChunks(count: 1)
            let closed = try http(app, "DELETE", "/rooms/\(room)", headers: ["Authorization": "Bearer \(aliceToken)"])
            #expect(closed.status < 300, "\(closed.status) \(closed.text)")
            #expect(try aliceListens.readToLastChunk())
            aliceListens.close()
            let afterClose = try http(app, "GET", path, headers: ["Authorization": "Bearer \(aliceToken)"])
            #expect(afterClose.errorCode == "room:error:closed", "\(afterClose.status) \(afterClose.text)")
        }
    }

    /// A room in which alice speaks a 450 Hz tone through the forwarding unit, and her token. The harness must outlive
    /// the test's use of the room: it holds her peer connection.
    static func speakingRoom(_ app: ParlorApplication) throws -> (SFUTests.Harness, String, SFUTests.Participant, String) {
        let harness = try SFUTests.Harness(app)
        let room = try createRoom(app)
        let alice = try harness.join(room, "alice", speaker: true)
        try alice.media.startStreaming(try RecordingAudioTests.tonePacket(hertz: 450), level: 30)
        return (harness, room, alice, try token(app, "alice"))
    }
}

/// A listener on a plain socket: the response head, then the chunked body chunk by chunk with when each arrived.
final class LiveReader {
    struct Chunk {
        let bytes: [UInt8]
        let arrival: Date
    }

    private var fd: Int32
    private var buffer: [UInt8] = []
    private(set) var status = 0
    private(set) var head = ""

    init(port: Int, path: String, headers: [String: String] = [:]) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestFailure("connect failed") }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        let bytes = Array((request + "\r\n").utf8)
        guard send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw TestFailure("send failed") }
        let end = try readUntil([13, 10, 13, 10])
        head = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    private func fill() throws {
        var scratch = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &scratch, scratch.count, 0)
        guard count > 0 else { throw TestFailure("the stream ended or timed out") }
        buffer += scratch[0..<count]
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        while true {
            if buffer.count >= marker.count,
               let index = (0...(buffer.count - marker.count)).first(where: { Array(buffer[$0..<($0 + marker.count)]) == marker }) {
                return index
            }
            try fill()
        }
    }

    /// The next chunk of the body (RFC 9112 §7.1), when its last byte arrived.
    func nextChunk() throws -> Chunk {
        let lineEnd = try readUntil([13, 10])
        guard let size = Int(String(decoding: buffer[..<lineEnd], as: UTF8.self), radix: 16), size > 0 else { throw TestFailure("the last chunk") }
        while buffer.count < lineEnd + 2 + size + 2 { try fill() }
        let bytes = Array(buffer[(lineEnd + 2)..<(lineEnd + 2 + size)])
        buffer.removeFirst(lineEnd + 2 + size + 2)
        return Chunk(bytes: bytes, arrival: Date())
    }

    /// Reads chunks until the last (zero-size) one; true when it came before the stream was cut.
    func readToLastChunk() throws -> Bool {
        while true {
            do { _ = try nextChunk() } catch let failure as TestFailure where failure.description == "the last chunk" { return true }
        }
    }

    func readChunks(count: Int) throws -> [Chunk] { try (0..<count).map { _ in try nextChunk() } }

    func readChunks(for seconds: Double) throws -> [Chunk] {
        let deadline = Date().addingTimeInterval(seconds)
        var chunks: [Chunk] = []
        while Date() < deadline { chunks.append(try nextChunk()) }
        return chunks
    }

    func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }
}

/// An Ogg stream's pages, whole (RFC 3533 §6: 27 bytes of header, the segment table, the body).
private func pages(_ bytes: [UInt8]) -> [[UInt8]] {
    var pages: [[UInt8]] = []
    var index = 0
    while index + 27 <= bytes.count {
        let segments = Int(bytes[index + 26])
        guard index + 27 + segments <= bytes.count else { break }
        let body = bytes[(index + 27)..<(index + 27 + segments)].reduce(0) { $0 + Int($1) }
        let end = index + 27 + segments + body
        guard end <= bytes.count else { break }
        pages.append(Array(bytes[index..<end]))
        index = end
    }
    return pages
}

/// The stream decoded with libopus (mono, 48 kHz), from its headers on.
private func decodedSamples(_ stream: [UInt8]) throws -> [Int16] {
    var reader = try OggOpusReader(bytes: stream)
    let decoder = try OpusDecoder(channelCount: Int(reader.head.channelCount))
    var samples: [Int16] = []
    // A live stream has no end-of-stream page: the reader says `.truncated` once the whole pages are read.
    do {
        while let packet = try reader.next() { samples += try decoder.decode(packet.data) }
    } catch OggOpusError.truncated {}
    return samples
}
