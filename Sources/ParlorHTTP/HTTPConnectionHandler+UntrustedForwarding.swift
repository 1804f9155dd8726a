import ParlorCodec

/// Forwarding headers from a peer outside `--trusted-proxies` are ignored. That is right for a client that forges
/// them, and a silent misconfiguration for a real proxy left untrusted: every client would count as the proxy. One
/// warning per server says so, however many requests carry them.
extension HTTPConnectionHandler {
    static let forwardingHeaders = ["Forwarded", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host"]

    func warnIfForwarded(_ headers: HTTPHeaders) {
        guard !context.warnedOfUntrustedForwarding.load(ordering: .relaxed),
              let name = Self.forwardingHeaders.first(where: { headers.contains($0) }),
              !context.warnedOfUntrustedForwarding.exchange(true, ordering: .relaxed) else { return }
        context.logger.warning(
            "ignoring forwarding headers from a peer that is not a trusted proxy; if a reverse proxy sits in front, set --trusted-proxies to its address (warned once)",
            ["peer": connection.peerIP, "header": name])
    }
}
