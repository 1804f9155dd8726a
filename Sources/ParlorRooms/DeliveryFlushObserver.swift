/// Hands the batch's outbox to the delivery channel, and counts the room events in it as delivered. After a
/// rollback the outbox holds the errors that answer the batch's requests.
struct DeliveryFlushObserver: BatchEndObserver {
    func batchDidEnd(_ end: BatchEnd, in rooms: RoomsService) {
        end.outbox.flush(through: rooms.delivery)
        rooms.metrics.eventsDelivered.add(end.outbox.eventCount)
    }
}
