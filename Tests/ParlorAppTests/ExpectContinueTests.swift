#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Issue 34, item 17: `Expect: 100-continue` (RFC 9110 §10.1.1), against the `parlor` binary. A client that waits for
/// `100 Continue` before its body gets it, or gets the final error at once when the head alone is refused.
@Suite struct ExpectContinueTests {
    static let body = #"{"name":"alice"}"#

    static func head(_ method: String, _ path: String, length: Int, expect: String = "100-continue", version: String = "1.1") -> String {
        "\(method) \(path) HTTP/\(version)\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(length)\r\nExpect: \(expect)\r\n\r\n"
    }

    @Test func headWithExpectGetsContinueThenTheBodyIsRead() throws {
        let server = try ServerProcess()
        let connection = try RawConnection(port: server.port, timeout: 3)
        try connection.send(Self.head("POST", "/auth", length: Self.body.utf8.count))
        // Only the head went out: the server must say 100 now, before any body byte exists.
        let interim = try connection.readResponse()
        #expect(interim.status == 100)
        try connection.send(Self.body)
        let final = try connection.readResponse()
        #expect(final.status == 200, "\(final.text)")
        #expect(final.object["jwt"] is String, "the body was read whole: \(final.text)")
        // The connection stays usable for the next request, with the expectation met again.
        try connection.send(Self.head("POST", "/auth", length: #"{"name":"bob"}"#.utf8.count, expect: "100-Continue"))
        #expect(try connection.readResponse().status == 100)
        try connection.send(#"{"name":"bob"}"#)
        #expect(try connection.readResponse().status == 200)
    }

    @Test func aHeadThatWillBeRefusedGetsTheFinalErrorInsteadOfContinue() throws {
        let server = try ServerProcess(["--max-body-bytes", "1024"])
        for (label, head, status, code) in [
            ("body over the limit", Self.head("POST", "/auth", length: 2048), 413, "http:error:body-too-large"),
            ("no such route", Self.head("POST", "/nowhere", length: 10), 404, "http:error:not-found"),
            ("method not allowed", Self.head("PATCH", "/auth", length: 10), 405, "http:error:method-not-allowed"),
            ("unknown expectation", Self.head("POST", "/auth", length: 10, expect: "a-pony"), 417, "http:error:expectation-failed"),
        ] {
            let connection = try RawConnection(port: server.port, timeout: 3)
            try connection.send(head)
            let response = try connection.readResponse()
            #expect(response.status == status, "\(label): \(response.status) \(response.text)")
            #expect(response.errorCode == code, "\(label): \(response.text)")
            #expect(try connection.waitForClose(), "\(label): the unread body's connection is closed")
        }
        // An unknown expectation on a request without a body is refused too, and the connection stays open.
        let connection = try RawConnection(port: server.port, timeout: 3)
        try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: a-pony\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try connection.readResponse().status == 417)
        #expect(try connection.readResponse().status == 200)
    }
}
