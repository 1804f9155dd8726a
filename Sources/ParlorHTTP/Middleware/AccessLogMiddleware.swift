#if canImport(Glibc)
import Glibc
#endif
import ParlorCodec
import ParlorLoop

/// One `request` line at info level per answer: method, redacted path, status, body bytes, duration, client and
/// peer addresses, request id. On a connection's loop the lines are batched per round of the loop (one write(2) for
/// all the requests it answered); without a loop (`HTTPPipeline.respond`) each is written at once.
public struct AccessLogMiddleware: HTTPMiddleware {
    let logger: Logger
    /// Where finished lines go instead of stderr (tests read them).
    let write: (@Sendable ([UInt8]) -> Void)?

    public init(logger: Logger, write: (@Sendable ([UInt8]) -> Void)? = nil) {
        self.logger = logger
        self.write = write
    }

    public func responded(status: Int, bytes: Int, _ exchange: HTTPExchange) {
        guard logger.isEnabled(.info) else { return }
        if write == nil, let loop = exchange.connection.loop {
            loop.appendLog { buffer in line(status: status, bytes: bytes, exchange, to: &buffer) }
            return
        }
        var buffer: [UInt8] = []
        line(status: status, bytes: bytes, exchange, to: &buffer)
        if let write {
            write(buffer)
        } else {
            _ = buffer.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        }
    }

    /// Written field by field: this runs per request.
    private func line(status: Int, bytes: Int, _ exchange: HTTPExchange, to buffer: inout [UInt8]) {
        let micros = (MonotonicClock.now() - exchange.startedAt) / 1000
        let line = logger.beginLine(.info, "request", to: &buffer)
        line.text("method", exchange.method, to: &buffer)
        line.text("path", LogRedaction.path(exchange.path), to: &buffer)
        line.integer("status", status, to: &buffer)
        line.integer("bytes", bytes, to: &buffer)
        line.milliseconds("duration_ms", micros: micros, to: &buffer)
        buffer.append(contentsOf: addressFields(line, exchange))
        line.text("request_id", exchange.requestID, to: &buffer)
        line.end(to: &buffer)
    }

    /// The `client` and `peer` fields, written once per connection and client address.
    private func addressFields(_ line: Logger.LineWriter, _ exchange: HTTPExchange) -> [UInt8] {
        let connection = exchange.connection
        if let cached = connection.loggedAddress, cached.client == exchange.clientAddress { return cached.fields }
        var fields: [UInt8] = []
        line.text("client", exchange.clientAddress, to: &fields)
        line.text("peer", connection.peer, to: &fields)
        connection.loggedAddress = (exchange.clientAddress, fields)
        return fields
    }
}
