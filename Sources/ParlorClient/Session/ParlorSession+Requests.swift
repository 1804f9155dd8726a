/// A request waiting for its reply.
struct PendingRequest: Sendable {
    let type: String
    let continuation: CheckedContinuation<Result<JSONValue, ParlorError>, Never>
    let timer: Task<Void, Never>
}

extension ParlorSession {
    /// Sends `type` once the session is connected (waiting out a reconnect) and returns the reply body.
    func request(_ type: String, _ body: [String: JSONValue]) async throws(ParlorError) -> JSONValue {
        try await waitUntilConnected()
        return try await send(type, body)
    }

    func request(_ type: RequestType, _ body: [String: JSONValue]) async throws(ParlorError) -> JSONValue {
        try await request(type.rawValue, body)
    }

    /// Sends a request on the current connection now and waits for its reply, matched by tid.
    /// Every waiter is resumed exactly once: by its reply, its timeout, cancellation, or the connection ending.
    func send(_ type: String, _ body: [String: JSONValue]) async throws(ParlorError) -> JSONValue {
        guard let transport else { throw .connectionLost("not connected") }
        tidCounter += 1
        let tid = "c\(tidCounter)"
        let text = JSONValue.object(["type": .string(type), "tid": .string(tid), "body": .object(JSONObject(sortingKeysOf: body))]).encodedString()
        let timeout = connector.configuration.requestTimeout
        let result: Result<JSONValue, ParlorError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard !Task.isCancelled else {
                    continuation.resume(returning: .failure(.cancelled))
                    return
                }
                let timer = Task { [weak self] in
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    await self?.complete(tid, .failure(.timedOut("no reply to \(type) within \(timeout)")))
                }
                pending[tid] = PendingRequest(type: type, continuation: continuation, timer: timer)
                do throws(ParlorError) {
                    try transport.send(text: text)
                } catch {
                    complete(tid, .failure(error))
                }
            }
        } onCancel: {
            Task { await self.complete(tid, .failure(.cancelled)) }
        }
        return try result.get()
    }

    /// Resumes the waiter for `tid`, if it is still waiting.
    func complete(_ tid: String, _ result: Result<JSONValue, ParlorError>) {
        guard let request = pending.removeValue(forKey: tid) else { return }
        request.timer.cancel()
        request.continuation.resume(returning: result)
    }

    func failAllPending(_ error: ParlorError) {
        let waiting = pending
        pending = [:]
        for request in waiting.values {
            request.timer.cancel()
            request.continuation.resume(returning: .failure(error))
        }
    }

    /// Returns at once when connected; waits out a reconnect; throws once closed.
    func waitUntilConnected() async throws(ParlorError) {
        switch state {
        case .connected, .resumed:
            return
        case .closed(let error):
            throw error ?? .closedByClient
        case .reconnecting:
            let result = await withCheckedContinuation { connectionWaiters.append($0) }
            try result.get()
        }
    }

    func releaseConnectionWaiters(_ result: Result<Void, ParlorError>) {
        let waiters = connectionWaiters
        connectionWaiters = []
        for waiter in waiters { waiter.resume(returning: result) }
    }
}
