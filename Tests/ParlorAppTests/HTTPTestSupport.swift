#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp

// Helpers shared by the HTTP-side suites (tutorial routes, tokens, errors, connections, persistence, executable).

/// One request carrying `Authorization: Bearer <token>` when a token is given.
func http(_ app: ParlorApplication, _ method: String, _ path: String, json: String? = nil, token: String?) throws -> TestResponse {
    try http(app, method, path, json: json, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
}

/// Sends raw bytes on a fresh connection and reads one response.
func rawRequest(_ app: ParlorApplication, _ request: String, headOnly: Bool = false) throws -> (TestResponse, RawConnection) {
    let connection = try RawConnection(port: app.port)
    try connection.send(request)
    return (try connection.readResponse(headOnly: headOnly), connection)
}

/// Every response carries Date, Content-Type and a Content-Length that matches the body.
func expectWellFormed(_ response: TestResponse, headOnly: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.header("Date")?.hasSuffix(" GMT") == true, "Date missing or malformed", sourceLocation: sourceLocation)
    #expect(response.header("Content-Type") != nil, "Content-Type missing", sourceLocation: sourceLocation)
    let length = response.header("Content-Length").flatMap(Int.init)
    #expect(length != nil, "Content-Length missing", sourceLocation: sourceLocation)
    if !headOnly, let length {
        #expect(length == response.body.count, sourceLocation: sourceLocation)
    }
}

/// A JSON error `{"code","title","detail"}` with this status and code; returns the detail.
@discardableResult
func expectProblem(_ response: TestResponse, _ status: Int, _ code: String,
                   sourceLocation: SourceLocation = #_sourceLocation) -> String {
    #expect(response.status == status, "expected \(status), got \(response.status) \(response.text)", sourceLocation: sourceLocation)
    #expect(response.header("Content-Type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
    let object = response.object
    #expect(object["code"] as? String == code, "body: \(response.text)", sourceLocation: sourceLocation)
    #expect((object["title"] as? String)?.isEmpty == false, "no title in \(response.text)", sourceLocation: sourceLocation)
    let detail = object["detail"] as? String
    #expect(detail?.isEmpty == false, "no detail in \(response.text)", sourceLocation: sourceLocation)
    expectWellFormed(response, sourceLocation: sourceLocation)
    return detail ?? ""
}

/// The URL of a `Link: <url>; rel="next"` header.
func nextLink(_ response: TestResponse) -> String? {
    guard let link = response.header("Link"), link.hasSuffix(#"rel="next""#),
          let open = link.firstIndex(of: "<"), let close = link.firstIndex(of: ">"), open < close else { return nil }
    return String(link[link.index(after: open)..<close])
}

// MARK: JWT pieces

enum Base64URLText {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func encode(_ text: String) -> String { encode(Array(text.utf8)) }

    static func decode(_ text: Substring) -> [UInt8]? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { Array($0) }
    }
}

/// The decoded JSON header and payload of a compact JWT.
func jwtParts(_ token: String) throws -> (header: [String: Any], payload: [String: Any]) {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let header = Base64URLText.decode(parts[0]), let payload = Base64URLText.decode(parts[1]),
          let headerObject = try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any],
          let payloadObject = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
        throw TestFailure("not a compact JWT: \(token)")
    }
    return (headerObject, payloadObject)
}

var unixNow: Int64 { Int64(Date().timeIntervalSince1970) }

// MARK: Files

/// A fresh directory under the system temp dir, removed after `body`.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-test-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}
