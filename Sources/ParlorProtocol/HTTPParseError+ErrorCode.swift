import ParlorCodec

extension ErrorCode {
    /// The code a request the HTTP parser refused is answered with.
    public init(_ failure: HTTPParseError.Failure) {
        self = switch failure {
        case .malformedRequest: .httpMalformedRequest
        case .headerTooLarge: .httpHeaderTooLarge
        case .tooManyHeaders: .httpTooManyHeaders
        case .invalidContentLength: .httpInvalidContentLength
        case .bodyTooLarge: .httpBodyTooLarge
        case .invalidChunk: .httpInvalidChunk
        case .unsupportedTransferEncoding: .httpUnsupportedTransferEncoding
        case .versionNotSupported: .httpVersionNotSupported
        case .missingHost: .httpMissingHost
        }
    }
}

extension HTTPParseError {
    public var errorCode: ErrorCode { ErrorCode(failure) }
    /// The wire code, as problem responses carry it.
    public var code: String { errorCode.rawValue }
    /// The status the server answers with before closing.
    public var status: Int { errorCode.httpStatus }
}
