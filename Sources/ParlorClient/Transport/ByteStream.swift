/// What one `receive` got.
enum ReceiveResult {
    case bytes(Int)
    case endOfStream
    case timedOut
}

/// A connected, blocking byte stream to the server: a plain `TCPSocket`, or TLS (OpenSSL on Linux, Network.framework
/// on Apple platforms). HTTPExchange and WebSocketTransport see only this, so http:// and https:// share their code.
///
/// Threading, as TCPSocket's: any thread may `send`, `shutdown` or `close`; one thread at a time may `receive`.
protocol ByteStream: AnyObject, Sendable {
    /// Bounds every later `receive` (nil: wait forever); a receive that times out returns `.timedOut`.
    func setReceiveTimeout(_ timeout: Duration?)
    func setSendTimeout(_ timeout: Duration?)
    /// Writes all of `bytes` or throws.
    func send(_ bytes: [UInt8]) throws(ParlorError)
    /// Blocks for the next bytes, stored at the start of `chunk`; `.bytes(n)` says how many.
    func receive(into chunk: inout [UInt8]) throws(ParlorError) -> ReceiveResult
    /// Ends the connection as a network failure would (no TLS close_notify): a blocked `receive` returns end of stream.
    func shutdown()
    /// Closes once; later sends fail, later closes do nothing.
    func close()
}

extension TCPSocket: ByteStream {}

extension ServerEndpoint {
    /// Connects, and for https:// and wss:// completes a verified TLS handshake, within `timeout`.
    /// A TLS endpoint never falls back to a plain connection: any TLS failure throws `client:error:tls`.
    func openStream(trust: TLSTrust, timeout: Duration) throws(ParlorError) -> any ByteStream {
        guard usesTLS else { return try TCPSocket.connect(host: host, port: port, timeout: timeout) }
        #if canImport(Network)
        return try NetworkTLSStream.connect(host: host, port: port, trust: trust, timeout: timeout)
        #elseif canImport(COpenSSL)
        return try OpenSSLStream.connect(host: host, port: port, trust: trust, timeout: timeout)
        #else
        throw ParlorError.tls("this platform has no TLS implementation in ParlorClient; use http:// or ws://")
        #endif
    }
}
