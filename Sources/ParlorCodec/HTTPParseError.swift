/// Why a request could not be parsed. `failure` is what went wrong; ParlorProtocol gives it its wire code and the
/// status the server answers with before closing (`HTTPParseError+ErrorCode`). `detail` is for humans.
public struct HTTPParseError: Error, Sendable, Equatable {
    public enum Failure: Sendable, Equatable {
        case malformedRequest, headerTooLarge, tooManyHeaders, invalidContentLength, bodyTooLarge, invalidChunk
        case unsupportedTransferEncoding, versionNotSupported, missingHost
    }

    public var failure: Failure
    public var title: String
    public var detail: String

    public init(_ failure: Failure, title: String, detail: String) {
        self.failure = failure
        self.title = title
        self.detail = detail
    }
}

extension HTTPParseError {
    static func malformed(_ detail: String) -> Self {
        .init(.malformedRequest, title: "Malformed request", detail: detail)
    }

    static func headerTooLarge(limit: Int) -> Self {
        .init(.headerTooLarge, title: "Request header too large",
              detail: "The request line and headers exceed \(limit) bytes.")
    }

    static func tooManyHeaders(limit: Int) -> Self {
        .init(.tooManyHeaders, title: "Too many headers",
              detail: "The request has more than \(limit) header fields.")
    }

    static func invalidContentLength(_ detail: String) -> Self {
        .init(.invalidContentLength, title: "Invalid Content-Length", detail: detail)
    }

    static func bodyTooLarge(limit: Int) -> Self {
        .init(.bodyTooLarge, title: "Request body too large",
              detail: "The request body exceeds \(limit) bytes.")
    }

    static func invalidChunk(_ detail: String) -> Self {
        .init(.invalidChunk, title: "Invalid chunked encoding", detail: detail)
    }

    static func unsupportedTransferEncoding(_ codings: [String]) -> Self {
        .init(.unsupportedTransferEncoding, title: "Unsupported transfer encoding",
              detail: "Transfer-Encoding \"\(codings.joined(separator: ", "))\" is not supported; only \"chunked\" is.")
    }

    static func versionNotSupported(_ version: String) -> Self {
        .init(.versionNotSupported, title: "HTTP version not supported",
              detail: "\(version) is not supported; use HTTP/1.1 or HTTP/1.0.")
    }

    static let missingHost = HTTPParseError(
        .missingHost, title: "Missing Host header",
        detail: "HTTP/1.1 requests must carry a Host header.")
}
