import ParlorLoop
import ParlorMetrics
import ParlorRooms
import ParlorRoomsPostgres
import ParlorRoomsSQLite

extension AppStorage {
    /// The delivery side of the webhook outbox for `store`'s node.
    func webhookOutboxStore(for store: any RoomStore) -> (any WebhookOutboxStore)? {
        switch self {
        case .sqlite(let database): SQLiteWebhookOutbox(database: database)
        case .postgres: (store as? PostgresRoomStore).map(PostgresWebhookOutbox.init(store:))
        }
    }
}

extension ParlorApplication {
    /// With --webhook-urls: the outbox the rooms thread writes (forget the rows of receivers no longer configured)
    /// and its delivery threads, which start on what a previous run left.
    static func startWebhooks(_ configuration: AppConfiguration, storage: AppStorage, store: any RoomStore, secret: [UInt8],
                              logger: Logger, metrics: ServerMetrics) throws -> (WebhookOutbox, WebhookDispatcher)? {
        guard !configuration.webhookURLs.isEmpty, let outboxStore = storage.webhookOutboxStore(for: store) else { return nil }
        let urls = Array(Set(configuration.webhookURLs)).sorted()
        let forgotten = try outboxStore.deleteWebhooks(notTargeting: urls)
        if forgotten > 0 { logger.warning("webhooks for receivers no longer configured deleted", ["count": String(forgotten)]) }
        let outbox = WebhookOutbox(urls: urls, store: outboxStore, maxRows: configuration.webhookQueueMax, metrics: metrics,
                                   initialRows: try outboxStore.webhookCount())
        let pollInterval: Double? = if case .postgres = storage { configuration.rooms.nodeLease.seconds / 3 } else { nil }
        let dispatcher = try WebhookDispatcher(outbox: outbox, secret: secret, tls: WebhookTLS(caFile: configuration.webhookCAFile),
                                               retryFor: configuration.webhookRetrySeconds,
                                               initialBackoff: configuration.webhookInitialBackoff, pollInterval: pollInterval,
                                               logger: logger, metrics: metrics)
        return (outbox, dispatcher)
    }
}
