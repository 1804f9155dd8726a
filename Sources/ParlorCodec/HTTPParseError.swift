/// Why a request could not be parsed, with the status the server should answer before closing.
///
/// `code` is stable and machine-readable (it ends up in problem responses); `detail` is for humans.
public struct HTTPParseError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var title: String
    public var detail: String

    public init(status: Int, code: String, title: String, detail: String) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
    }
}

extension HTTPParseError {
    static func malformed(_ detail: String) -> Self {
        .init(status: 400, code: "http:error:malformed-request", title: "Malformed request", detail: detail)
    }

    static func headerTooLarge(limit: Int) -> Self {
        .init(status: 431, code: "http:error:header-too-large", title: "Request header too large",
              detail: "The request line and headers exceed \(limit) bytes.")
    }

    static func tooManyHeaders(limit: Int) -> Self {
        .init(status: 431, code: "http:error:too-many-headers", title: "Too many headers",
              detail: "The request has more than \(limit) header fields.")
    }

    static func invalidContentLength(_ detail: String) -> Self {
        .init(status: 400, code: "http:error:invalid-content-length", title: "Invalid Content-Length", detail: detail)
    }

    static func bodyTooLarge(limit: Int) -> Self {
        .init(status: 413, code: "http:error:body-too-large", title: "Request body too large",
              detail: "The request body exceeds \(limit) bytes.")
    }

    static func invalidChunk(_ detail: String) -> Self {
        .init(status: 400, code: "http:error:invalid-chunk", title: "Invalid chunked encoding", detail: detail)
    }

    static func unsupportedTransferEncoding(_ codings: [String]) -> Self {
        .init(status: 501, code: "http:error:unsupported-transfer-encoding", title: "Unsupported transfer encoding",
              detail: "Transfer-Encoding \"\(codings.joined(separator: ", "))\" is not supported; only \"chunked\" is.")
    }

    static func versionNotSupported(_ version: String) -> Self {
        .init(status: 505, code: "http:error:version-not-supported", title: "HTTP version not supported",
              detail: "\(version) is not supported; use HTTP/1.1 or HTTP/1.0.")
    }

    static let missingHost = HTTPParseError(
        status: 400, code: "http:error:missing-host", title: "Missing Host header",
        detail: "HTTP/1.1 requests must carry a Host header.")
}
