import ParlorCodec
import ParlorProtocol

/// `Expect` (RFC 9110 §10.1.1): a client that sends `Expect: 100-continue` waits for `100 Continue` before it
/// sends the body, so it learns of a refusal without uploading the body first. (The 417 for a request that arrived
/// whole is `ExpectationMiddleware`'s.)
extension HTTPConnectionHandler {
    static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Called once the head of a request with a body is complete and the body has not all arrived: sends
    /// `100 Continue`, or instead the final error the request will get whatever its body (and closes, since the body
    /// that may follow is not read). A body over the limit never gets here: the parser refuses it by its
    /// Content-Length with 413.
    func answerExpectation(before head: HTTPRequestHead) {
        guard head.headers.contains("Expect") else { return }
        if let error = ExpectationMiddleware.unmetExpectation(head) ?? refusalBeforeBody(head) {
            failAndClose(error, method: head.method, path: head.path)
            return
        }
        // An HTTP/1.0 client does not know 1xx responses (RFC 9110 §15.2).
        if head.versionMinor == 1 { connection.write(Self.continueResponse) }
    }

    /// What the request is refused with for its head alone: no route for its method and path.
    private func refusalBeforeBody(_ head: HTTPRequestHead) -> HTTPError? {
        if case .failure(let error) = context.pipeline.router.match(method: head.method, path: head.path) { return error }
        return nil
    }
}
