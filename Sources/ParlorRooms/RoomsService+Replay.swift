/// A resume's replay is paced by `replayPacer` (ReplayPacer.swift); the connection's loop asks for each next page.
extension RoomsService {
    /// Called on the connection's loop once the page sent last has drained (or, after the last page, to return
    /// its share of the budget): sends the next page, or queues the connection until the budget allows it.
    public func replayNext(_ client: ClientRef) {
        thread.execute { [self] in
            assertOnRoomsThread()
            var outbox = Outbox()
            do {
                // Between batches: one snapshot (on `:memory:` the writer, free now) for the pages sent here.
                try store.read { reader in replayPacer.pageDrained(by: client.id, &outbox, reader) }
            } catch {
                logger.error("replay pages could not be read", ["error": "\(error)"])
            }
            outbox.flush(through: delivery)
        }
    }
}
