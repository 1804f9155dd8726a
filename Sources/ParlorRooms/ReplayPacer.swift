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

/// The paced replay of resumed sessions (issue 34): a replay is read from the store a page at a time, as the
/// connection drains the one before, so a client that does not read holds one page, not its whole history. A page
/// is at most `pageBytes` of frames; pages held across all connections are at most `budgetBytes`, over which a
/// replay waits for others to drain instead of reading more. A page counts until its connection asks for the next
/// one, or closes. It owns the budget and each replaying connection's cursors; it is confined to the rooms thread
/// (`RoomsService` calls it there), so it is not Sendable.
final class ReplayPacer {
    /// One connection's replay: the rooms still to send, in order; the bytes of its page not yet drained; whether
    /// it waits for the budget.
    private struct Replay {
        var cursors: [ReplayCursor] = []
        var charge = 0
        var waiting = false
    }

    private let pageBytes: Int
    private let budgetBytes: Int
    private let stallTimeout: TimeSpan
    private let logger: Logger
    /// Connections replaying or holding a page (a connection at rest has no entry).
    private var replays: [ClientID: Replay] = [:]
    /// Bytes of pages sent and not yet drained, across all connections.
    private var bytesCharged = 0
    /// Connections waiting for the budget to allow their next page, first from `waiterHead`.
    private var waiters: [ClientID] = []
    private var waiterHead = 0

    /// Rows read per store query while filling a page: a page of small events is a few reads.
    static let rowsPerRead = 256

    init(configuration: RoomsConfiguration, logger: Logger) {
        pageBytes = configuration.replayPageBytes
        budgetBytes = configuration.replayBudgetBytes
        stallTimeout = configuration.replayStallTimeout
        self.logger = logger
    }

    /// Starts the replay of `cursors` on a connection that just resumed: the first page goes with the reply.
    func start(_ cursors: [ReplayCursor], for clientID: ClientID, _ outbox: inout Outbox, _ reader: any RoomReader) {
        guard !cursors.isEmpty else { return }
        let resting = replays[clientID] == nil
        replays[clientID, default: Replay()].cursors += cursors
        // A connection already replaying goes on at its own pace; its new rooms follow the ones it has.
        if resting { sendPage(to: clientID, &outbox, reader) }
    }

    /// The connection drained the page sent last (or, after the last page, returns its share of the budget):
    /// sends its next page, or queues it until the budget allows it.
    func pageDrained(by clientID: ClientID, _ outbox: inout Outbox, _ reader: any RoomReader) {
        release(clientID, &outbox, reader)
        if replays[clientID]?.cursors.isEmpty == false { sendPage(to: clientID, &outbox, reader) }
        forgetIfResting(clientID)
    }

    /// A closed connection's page returns to the budget, and its replay is dropped.
    func end(_ clientID: ClientID, _ outbox: inout Outbox, _ reader: any RoomReader) {
        replays[clientID]?.waiting = false
        release(clientID, &outbox, reader)
        replays[clientID] = nil
    }

    /// Sends the connection's next page if the budget allows, else queues it (it is sent when a charge returns).
    private func sendPage(to clientID: ClientID, _ outbox: inout Outbox, _ reader: any RoomReader) {
        guard var replay = replays[clientID], !replay.waiting else { return }
        // One page always fits when nothing is held, so a page larger than the budget cannot stall every replay.
        guard bytesCharged == 0 || bytesCharged + pageBytes <= budgetBytes else {
            replays[clientID]?.waiting = true
            waiters.append(clientID)
            // Live frames wait behind the replay meanwhile; the connection asks again only after the next page.
            outbox.replayPageEnd(to: clientID, more: true, stallTimeout: nil)
            return
        }
        var bytes = 0
        var messages: [[UInt8]] = []
        while bytes < pageBytes, let cursor = replay.cursors.first {
            let page: [EventRecord]
            do {
                page = try reader.events(roomID: cursor.roomID, since: cursor.after, pageSize: Self.rowsPerRead).items
            } catch {
                logger.error("replay page could not be read", ["room": cursor.roomID, "error": "\(error)"])
                outbox.close(clientID, code: WebSocketCloseCode.internalError, reason: "replay failed, resume again")
                replay.cursors.removeAll()
                break
            }
            var after = cursor.after
            for event in page where event.id <= cursor.upTo && bytes < pageBytes {
                let message = ProtocolMessage.event(event)
                // Charged as the frame the connection holds, header included.
                bytes += WebSocketFrameEncoder.unmaskedFrameSize(payloadCount: message.count)
                messages.append(message)
                after = event.id
            }
            // Done with the room at its newest id at the resume, or where its stored events end.
            if after >= cursor.upTo || page.isEmpty || page[0].id > cursor.upTo {
                replay.cursors.removeFirst()
            } else {
                replay.cursors[0].after = after
            }
        }
        for message in messages { outbox.sendPacedEvent(message, to: clientID) }
        replay.charge += bytes
        bytesCharged += bytes
        replays[clientID] = replay
        outbox.replayPageEnd(to: clientID, more: !replay.cursors.isEmpty, stallTimeout: stallTimeout)
    }

    /// Returns the connection's page to the budget, and sends waiting connections theirs while it allows.
    private func release(_ clientID: ClientID, _ outbox: inout Outbox, _ reader: any RoomReader) {
        guard let charge = replays[clientID]?.charge, charge > 0 else { return }
        replays[clientID]?.charge = 0
        bytesCharged -= charge
        while waiterHead < waiters.count, bytesCharged + pageBytes <= budgetBytes {
            let waiter = waiters[waiterHead]
            waiterHead += 1
            guard replays[waiter]?.waiting == true else { continue }
            replays[waiter]?.waiting = false
            sendPage(to: waiter, &outbox, reader)
        }
        if waiterHead == waiters.count {
            waiters.removeAll(keepingCapacity: true)
            waiterHead = 0
        }
    }

    private func forgetIfResting(_ clientID: ClientID) {
        if let replay = replays[clientID], replay.cursors.isEmpty, replay.charge == 0, !replay.waiting { replays[clientID] = nil }
    }
}
