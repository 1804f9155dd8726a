extension ParlorSession {
    /// Makes `opened` the current connection and starts pumping what its reader thread reports, in order,
    /// into the actor (one message at a time, so events and replies are handled in the order they arrived).
    func attach(_ opened: WebSocketTransport.Opened) {
        generation += 1
        let generation = self.generation
        transport = opened.transport
        let (inputs, sink) = AsyncStream.makeStream(of: TransportInput.self, bufferingPolicy: .unbounded)
        opened.transport.startReading(opened.decoder, idleTimeout: connector.configuration.idleTimeout) { input in
            sink.yield(input)
            if case .closed = input { sink.finish() }
        }
        Task { [weak self] in
            for await input in inputs {
                guard let session = self else { return }
                await session.receive(input, generation: generation)
            }
        }
    }

    func receive(_ input: TransportInput, generation: Int) {
        guard generation == self.generation else { return }
        switch input {
        case .text(let text): handle(text)
        case .closed(let error): connectionEnded(error)
        }
    }

    /// A reply (has our tid), a room event (has cid), or something this client ignores.
    private func handle(_ text: String) {
        guard let message = JSONValue.parse(text), let type = message["type"]?.stringValue else { return }
        if let tid = message["tid"]?.stringValue, pending[tid] != nil {
            if type == ProtocolFrame.errorType {
                complete(tid, .failure(ParlorError(body: message["body"], status: nil)))
            } else {
                complete(tid, .success(message["body"] ?? .object([:])))
            }
            return
        }
        guard message["cid"] != nil, let event = try? RoomEvent(json: message) else { return }
        deliver(event)
    }

    /// Hands an event on unless it was delivered already (a resume replays from the last id this side saw).
    /// Transient events (no id) are never replayed, so they pass straight through.
    private func deliver(_ event: RoomEvent) {
        if let id = event.id {
            if let last = delivered[event.roomID], id <= last { return }
            delivered[event.roomID] = id
            if var room = joined[event.roomID] {
                if event.type == .memberLeft && event.memberID == room.memberID {
                    joined[event.roomID] = nil  // our membership ended (left elsewhere, kicked, dropped, room closed)
                } else {
                    room.lastEventID = max(room.lastEventID, id)
                    joined[event.roomID] = room
                }
            }
        } else if let accounted = event.audience?.lastEventID ?? event.presence?.lastEventID {
            // A summary's events up to its id came before it or are in it: a resume need not replay them.
            delivered[event.roomID] = max(delivered[event.roomID] ?? 0, accounted)
            if var room = joined[event.roomID] {
                room.lastEventID = max(room.lastEventID, accounted)
                joined[event.roomID] = room
            }
        }
        eventHub.yield(event)
    }

    /// The current connection is gone: fail what waited on it, then reconnect unless that is pointless.
    private func connectionEnded(_ error: ParlorError) {
        transport = nil
        failAllPending(.connectionLost("the connection dropped before the reply arrived (\(error.detail))"))
        // While reconnecting, the attempt in progress sees its resume fail and carries on.
        guard !isClosed, !isReconnecting else { return }
        guard connector.configuration.reconnect.maxAttempts > 0, !error.endsSession else {
            finish(error)
            return
        }
        state = .reconnecting(attempt: 0, after: error)
        reconnectTask = Task { await self.reconnect(after: error) }
    }

    private func reconnect(after firstError: ParlorError) async {
        let policy = connector.configuration.reconnect
        var lastError = firstError
        for attempt in 1...policy.maxAttempts {
            guard isReconnecting else { return }  // closed meanwhile
            setState(.reconnecting(attempt: attempt, after: lastError))
            try? await Task.sleep(for: policy.delay(beforeAttempt: attempt))
            await waitWhileReconnectsPaused()
            guard isReconnecting else { return }
            do {
                let (opened, hello) = try await connector.open()
                guard isReconnecting else {
                    opened.transport.discard()
                    return
                }
                try await resume(over: opened, hello: hello)
                return
            } catch {
                guard isReconnecting else { return }
                lastError = error
                abandonConnection()  // a resume that failed on a live socket (timeout, error reply) must not leak it
                if error.isAuthenticationFailure {
                    finish(error)  // a new token is needed; retrying cannot help
                    return
                }
            }
        }
        guard isReconnecting else { return }
        finish(ParlorError(code: ParlorError.Code.reconnectFailed,
                           detail: "gave up after \(policy.maxAttempts) attempts; last error: \(lastError)"))
    }

    /// session:resume on the new connection with the newest event id seen per joined room; the server re-attaches
    /// the rooms still ours and replays what we missed after its reply, which `deliver` de-duplicates.
    private func resume(over opened: WebSocketTransport.Opened, hello: SessionHello) async throws(ParlorError) {
        let previousSessionID = sessionID
        attach(opened)
        sessionID = hello.sessionID
        var positions: [String: JSONValue] = [:]
        for (roomID, room) in joined {
            positions[roomID] = JSONValue(max(room.lastEventID, delivered[roomID] ?? 0))
        }
        var resumed: [String] = []
        var lost: [String] = []
        do {
            let reply = try JSONFields(try await send(RequestType.sessionResume.rawValue, [
                "session_id": .string(previousSessionID), "last_event_ids": .object(JSONObject(sortingKeysOf: positions)),
            ]), "session:resume reply")
            for item in try reply.array("resumed") {
                if let roomID = item["cid"]?.stringValue { resumed.append(roomID) }
            }
            lost = try reply.array("lost").compactMap(\.stringValue)
            sessionID = reply["session_id"]?.stringValue ?? hello.sessionID
        } catch where error.code == ParlorError.Code.sessionNotFound {
            lost = Array(positions.keys)  // the server no longer knows the old session: nothing can be resumed
        }
        guard isReconnecting else { return }
        for roomID in lost { joined[roomID] = nil }
        setState(.resumed(sessionID: sessionID, resumed: resumed.sorted(), lost: lost.sorted()))
        releaseConnectionWaiters(.success(()))
    }

    /// Drops the current connection and ignores anything it still reports.
    private func abandonConnection() {
        let stale = transport
        transport = nil
        generation += 1
        stale?.drop()
    }

    func setState(_ newState: ConnectionState) {
        state = newState
        stateHub.yield(newState)
    }

    /// Closed for good: everything waiting fails, both streams end.
    func finish(_ error: ParlorError?) {
        guard !isClosed else { return }
        setState(.closed(error))
        let failure = error ?? .closedByClient
        failAllPending(failure)
        releaseConnectionWaiters(.failure(failure))
        reconnectsPaused = false
        let paused = pauseWaiters
        pauseWaiters = []
        for waiter in paused { waiter.resume() }
        transport?.drop()
        transport = nil
        stateHub.finish()
        eventHub.finish()
    }

    // MARK: Fault hooks (for tests; public so release builds of a test target can use them)

    /// Cuts the socket as a network failure would (no close frame): the session then reconnects and resumes
    /// (`connectionStates` shows `.reconnecting`, then `.resumed`). Does nothing once closed.
    public func simulateNetworkDrop() {
        transport?.drop()
    }

    /// Holds reconnect attempts just before they connect, until `resumeReconnects()`: lets a test make something
    /// happen while the session is certainly away (e.g. let the server's grace period run out).
    public func pauseReconnects() {
        reconnectsPaused = true
    }

    /// Lets held and later reconnect attempts go ahead.
    public func resumeReconnects() {
        reconnectsPaused = false
        let waiters = pauseWaiters
        pauseWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    private func waitWhileReconnectsPaused() async {
        guard reconnectsPaused else { return }
        await withCheckedContinuation { pauseWaiters.append($0) }
    }
}
