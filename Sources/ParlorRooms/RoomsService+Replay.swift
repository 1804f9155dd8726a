import ParlorBasics
import ParlorCodec
import ParlorProtocol

/// What a resumed connection still has to be sent of one room: the events after `after`, up to `upTo` (the room's
/// newest when it resumed; later ones reach it live, held behind the replay by the connection).
struct ReplayCursor {
    let roomID: String
    var after: Int64
    let upTo: Int64
}

/// A resume's replay is read from the store a page at a time, as the connection drains the one before (issue 34):
/// a client that does not read holds one page, not its whole history. A page is at most `replayPageBytes` of
/// frames; pages held across all connections are at most `replayBudgetBytes`, over which a replay waits for others
/// to drain instead of reading more. A page counts until its connection asks for the next one, or closes.
extension RoomsService {
    /// Called on the connection's loop once the page sent last has drained (or, after the last page, to return
    /// its share of the budget): sends the next page, or queues the connection until the budget allows it.
    public func replayNext(_ client: ClientRef) {
        thread.execute { [self] in
            var outbox = Outbox()
            do {
                // Between batches: one snapshot (on `:memory:` the writer, free now) for the pages sent here.
                try store.read { reader in
                    releaseReplayCharge(of: client.id, &outbox, reader)
                    if state.clients[client.id]?.replays.isEmpty == false { sendReplayPage(to: client.id, &outbox, reader) }
                }
            } catch {
                logger.error("replay pages could not be read", ["error": "\(error)"])
            }
            outbox.flush(through: delivery)
        }
    }

    /// Starts the replay of `cursors` on a connection that just resumed: the first page goes with the reply.
    func startReplay(_ cursors: [ReplayCursor], for client: ClientRef, _ step: inout Step) {
        assertOnRoomsThread()
        guard !cursors.isEmpty else { return }
        let resting = state.clients[client.id]?.replays.isEmpty != false && state.clients[client.id]?.replayCharge == 0
        state.clients[client.id, default: ClientState(ref: client)].replays += cursors
        // A connection already replaying goes on at its own pace; its new rooms follow the ones it has.
        if resting { sendReplayPage(to: client.id, &step.batch.outbox, step.store) }
    }

    /// Sends the connection's next page if the budget allows, else queues it (it is sent when a charge returns).
    private func sendReplayPage(to clientID: ClientID, _ outbox: inout Outbox, _ reader: any RoomReader) {
        assertOnRoomsThread()
        guard var client = state.clients[clientID], !client.replayWaiting else { return }
        let budget = configuration.replayBudgetBytes
        // One page always fits when nothing is held, so a page larger than the budget cannot stall every replay.
        guard state.replayBytesCharged == 0 || state.replayBytesCharged + configuration.replayPageBytes <= budget else {
            client.replayWaiting = true
            state.clients[clientID] = client
            state.replayWaiters.append(clientID)
            // Live frames wait behind the replay meanwhile; the connection asks again only after the next page.
            outbox.replayPageEnd(to: clientID, more: true, stallTimeout: nil)
            return
        }
        var bytes = 0
        var messages: [[UInt8]] = []
        while bytes < configuration.replayPageBytes, let cursor = client.replays.first {
            let page: [EventRecord]
            do {
                page = try reader.events(roomID: cursor.roomID, since: cursor.after, pageSize: Self.replayRowsPerRead).items
            } catch {
                logger.error("replay page could not be read", ["room": cursor.roomID, "error": "\(error)"])
                outbox.close(clientID, code: WebSocketCloseCode.internalError, reason: "replay failed, resume again")
                client.replays.removeAll()
                break
            }
            var after = cursor.after
            for event in page where event.id <= cursor.upTo && bytes < configuration.replayPageBytes {
                let message = ProtocolMessage.event(event)
                // Charged as the frame the connection holds, header included.
                bytes += WebSocketFrameEncoder.unmaskedFrameSize(payloadCount: message.count)
                messages.append(message)
                after = event.id
            }
            // Done with the room at its newest id at the resume, or where its stored events end.
            if after >= cursor.upTo || page.isEmpty || page[0].id > cursor.upTo {
                client.replays.removeFirst()
            } else {
                client.replays[0].after = after
            }
        }
        for message in messages { outbox.sendPacedEvent(message, to: clientID) }
        client.replayCharge += bytes
        state.replayBytesCharged += bytes
        state.clients[clientID] = client
        outbox.replayPageEnd(to: clientID, more: !client.replays.isEmpty, stallTimeout: configuration.replayStallTimeout)
    }

    /// Returns the connection's page to the budget, and sends waiting connections theirs while it allows.
    func releaseReplayCharge(of clientID: ClientID, _ outbox: inout Outbox, _ reader: any RoomReader) {
        assertOnRoomsThread()
        guard let charge = state.clients[clientID]?.replayCharge, charge > 0 else { return }
        state.clients[clientID]?.replayCharge = 0
        state.replayBytesCharged -= charge
        while state.replayWaiterHead < state.replayWaiters.count,
              state.replayBytesCharged + configuration.replayPageBytes <= configuration.replayBudgetBytes {
            let waiter = state.replayWaiters[state.replayWaiterHead]
            state.replayWaiterHead += 1
            guard state.clients[waiter]?.replayWaiting == true else { continue }
            state.clients[waiter]?.replayWaiting = false
            sendReplayPage(to: waiter, &outbox, reader)
        }
        if state.replayWaiterHead == state.replayWaiters.count {
            state.replayWaiters.removeAll(keepingCapacity: true)
            state.replayWaiterHead = 0
        }
    }

    /// A closed connection's page returns to the budget (called with its state still there).
    func endReplay(of clientID: ClientID, _ step: inout Step) {
        assertOnRoomsThread()
        state.clients[clientID]?.replayWaiting = false
        releaseReplayCharge(of: clientID, &step.batch.outbox, step.store)
    }

    /// Rows read per store query while filling a page: a page of small events is a few reads.
    static let replayRowsPerRead = 256
}
