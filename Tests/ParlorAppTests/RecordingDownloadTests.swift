import Foundation
import ParlorApp
import Testing

/// GET /recordings/{rid}/{file} streamed from disk (issue 38): a file of megabytes arrives byte for byte with its
/// Content-Length, ranges are answered 206/416, and a client that stops reading stops the reads instead of making the
/// server hold the file.
@Suite struct RecordingDownloadTests {
    /// A finished recording whose `track-9.opus` is `size` pseudo-random bytes written by the test (the engine names
    /// only its speakers' tracks, so this one is left alone), and a token allowed to download it.
    static func recordingWithLargeFile(_ app: ParlorApplication, size: Int) throws -> (recordingID: String, token: String, bytes: [UInt8]) {
        let aliceToken = try token(app, "alice")
        let created = try http(app, "POST", "/rooms", json: #"{"display_name":"Panel","properties":{"mode":"stage"}}"#, token: aliceToken)
        let room = try #require(created.object["id"] as? String)
        let alice = try TestWebSocket(port: app.port, token: aliceToken)
        _ = try alice.join(room)
        let started = try http(app, "POST", "/rooms/\(room)/recordings", token: aliceToken)
        let recordingID = try #require(started.object["id"] as? String)
        #expect(try http(app, "DELETE", "/rooms/\(room)/recordings/\(recordingID)", token: aliceToken).status == 200)
        // Every 8 bytes different (a counter's hash under a random seed): a piece sent twice or out of order shows.
        let seed = UInt64.random(in: 0...UInt64.max)
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { buffer in
            for word in 0..<(size / 8) {
                buffer.storeBytes(of: (UInt64(word) &* 0x9E37_79B9_7F4A_7C15) ^ seed, toByteOffset: word * 8, as: UInt64.self)
            }
        }
        let directory = app.configuration.resolvedRecordingsDirectory + "/" + recordingID
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/track-9.opus"))
        return (recordingID, aliceToken, bytes)
    }

    @Test func aLargeFileDownloadsWholeAndInRanges() throws {
        try withRecordingServer(.sqlite) { app in
            let size = 5 * 1024 * 1024 + 123
            let (recordingID, token, bytes) = try Self.recordingWithLargeFile(app, size: size)
            let path = "/recordings/\(recordingID)/track-9.opus"
            let whole = try http(app, "GET", path, token: token)
            #expect(whole.status == 200)
            #expect(whole.header("Content-Length") == String(size))
            #expect(whole.header("Content-Type") == "audio/ogg")
            #expect(whole.header("Accept-Ranges") == "bytes")
            #expect(whole.header("Transfer-Encoding") == nil)
            let wholeIdentical = whole.body == bytes  // a Bool: a failed == on megabytes would be diffed for minutes
            #expect(wholeIdentical, "byte for byte")

            let headers = ["Authorization": "Bearer \(token)"]
            let middle = try http(app, "GET", path, headers: headers.merging(["Range": "bytes=100000-299999"]) { $1 })
            #expect(middle.status == 206)
            #expect(middle.header("Content-Range") == "bytes 100000-299999/\(size)")
            let middleIdentical = middle.body == Array(bytes[100_000..<300_000])  // a Bool: a failed == on megabytes would be diffed for minutes
            #expect(middleIdentical)
            let tail = try http(app, "GET", path, headers: headers.merging(["Range": "bytes=-10"]) { $1 })
            #expect(tail.status == 206)
            let tailIdentical = tail.body == Array(bytes[(size - 10)...])  // a Bool: a failed == on megabytes would be diffed for minutes
            #expect(tailIdentical)
            let open = try http(app, "GET", path, headers: headers.merging(["Range": "bytes=\(size - 5)-"]) { $1 })
            let openIdentical = open.body == Array(bytes[(size - 5)...])  // a Bool: a failed == on megabytes would be diffed for minutes
            #expect(openIdentical)
            let past = try http(app, "GET", path, headers: headers.merging(["Range": "bytes=\(size)-"]) { $1 })
            #expect(past.status == 416)
            #expect(past.errorCode == "recording:error:range-not-satisfiable")
            #expect(past.header("Content-Range") == "bytes */\(size)")
            let several = try http(app, "GET", path, headers: headers.merging(["Range": "bytes=0-1,5-6"]) { $1 })
            #expect(several.status == 200, "several ranges: the whole file")
            #expect(several.body.count == size)

            let (head, _) = try rawRequest(app, "HEAD \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n",
                                           headOnly: true)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(size))
        }
    }

    /// The client reads the head and stops: the server sends what the sockets' buffers take and then waits, far
    /// short of the file; once the client reads again the rest arrives intact.
    @Test func aClientThatStopsReadingStopsTheReads() throws {
        try withRecordingServer(.sqlite) { app in
            let size = 48 * 1024 * 1024
            let (recordingID, token, bytes) = try Self.recordingWithLargeFile(app, size: size)
            let before = app.metrics.streamBytes.load()
            let client = try RawConnection(port: app.port, timeout: 10, receiveBufferBytes: 64 * 1024)
            try client.send("GET /recordings/\(recordingID)/track-9.opus HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n")
            while client.buffer.firstRange(of: [13, 10, 13, 10]) == nil { try client.fill() }
            // Sent so far stops growing once the socket buffers are full (polled: a stall has no event to await).
            var sent = app.metrics.streamBytes.load() - before
            var steady = 0
            let deadline = Date().addingTimeInterval(20)
            while steady < 5, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.1)
                let now = app.metrics.streamBytes.load() - before
                steady = now == sent ? steady + 1 : 0
                sent = now
            }
            #expect(steady >= 5, "the reads stopped")
            #expect(sent > 0)
            #expect(sent < size / 4, "sent \(sent) of \(size) bytes to a client that does not read")
            let response = try client.readResponse()
            #expect(response.status == 200)
            let responseIdentical = response.body == bytes  // a Bool: a failed == on megabytes would be diffed for minutes
            #expect(responseIdentical, "the rest arrives once the client reads")
        }
    }
}
