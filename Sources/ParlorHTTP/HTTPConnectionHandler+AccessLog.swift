import ParlorLoop
import ParlorMetrics

/// The access log line and the request count of each answered request.
extension HTTPConnectionHandler {
    func accessLog(_ flight: InFlight, status: Int, bytes: Int) {
        guard context.logger.isEnabled(.info) else { return }
        let micros = (MonotonicClock.now() - flight.startedAt) / 1000
        // Batched per round of the loop: one write(2) for all the requests it answered. Written field by field:
        // this runs per request.
        let logger = context.logger
        connection.loop.appendLog { buffer in
            let line = logger.beginLine(.info, "request", to: &buffer)
            line.text("method", flight.method, to: &buffer)
            line.text("path", LogRedaction.path(flight.path), to: &buffer)
            line.integer("status", status, to: &buffer)
            line.integer("bytes", bytes, to: &buffer)
            line.milliseconds("duration_ms", micros: micros, to: &buffer)
            buffer.append(contentsOf: addressFields(line, client: flight.clientIP))
            line.text("request_id", flight.requestID, to: &buffer)
            line.end(to: &buffer)
        }
    }

    /// The `client` and `peer` fields of this connection's access log lines, written once and kept while the
    /// client address stays the same (always, unless a trusted proxy forwards several clients on one connection).
    private func addressFields(_ line: Logger.LineWriter, client: String) -> [UInt8] {
        if let cached = loggedAddress, cached.client == client { return cached.fields }
        var fields: [UInt8] = []
        line.text("client", client, to: &fields)
        line.text("peer", connection.peer, to: &fields)
        loggedAddress = (client, fields)
        return fields
    }

    func countRequest(_ flight: InFlight, status: Int) {
        context.metrics?.recordRequest(RequestKey(route: flight.route, method: flight.method, status: status), on: connection.loop)
    }
}
