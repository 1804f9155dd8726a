/// Resource limits that protect the server from oversized or abusive requests.
public struct HTTPParserLimits: Sendable {
    /// Request line plus all header lines, line endings included.
    public var maxHeaderBytes: Int
    public var maxHeaderCount: Int
    /// Decoded body size, for both Content-Length and chunked bodies.
    public var maxBodyBytes: Int

    public init(maxHeaderBytes: Int = 16384, maxHeaderCount: Int = 100, maxBodyBytes: Int = 65536) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
    }
}
