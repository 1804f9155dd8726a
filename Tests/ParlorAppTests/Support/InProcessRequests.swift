import ParlorApp
import ParlorCodec
import ParlorHTTP
import Testing

/// One request through the app's middleware and routes without a socket (`HTTPPipeline.respond`), as `http(app, …)`
/// sends it on a connection (`Host: 127.0.0.1` unless `headers` name another), answered as that connection would write
/// it (a HEAD's body left out).
func routed(_ app: ParlorApplication, _ method: String, _ path: String, json: String? = nil, headers: [String: String] = [:],
            from source: String = "127.0.0.1") throws -> TestResponse {
    var text = "\(method) \(path) HTTP/1.1\r\n" + (headers["Host"] == nil ? "Host: 127.0.0.1\r\n" : "")
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    if let json {
        text += "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)"
    } else {
        text += "\r\n"
    }
    var parser = HTTPRequestParser()
    parser.append(Array(text.utf8))
    let request = try #require(try parser.next(), "not a whole request: \(text)")
    let response = try #require(app.pipeline.respond(to: request, from: (source, 50000), trustedProxies: app.configuration.http.trustedProxies),
                                "\(method) \(path) was not answered")
    return TestResponse(status: response.status, headers: response.headers.map { ($0.name, $0.value) }, body: method == "HEAD" ? [] : response.body)
}

/// `routed` with `Authorization: Bearer <token>` when a token is given.
func routed(_ app: ParlorApplication, _ method: String, _ path: String, json: String? = nil, token: String?) throws -> TestResponse {
    try routed(app, method, path, json: json, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
}
