extension AppConfiguration {
    /// The webhook outbox's bound and https:// receivers' trust (--webhook-urls and --webhook-secret are core options).
    static let webhookOptions: [ConfigurationOption] = [
        option("--webhook-queue-max", "PARLOR_WEBHOOK_QUEUE_MAX", "100000", "webhooks kept in the database's outbox at most (one row per webhook and receiver; per node with PostgreSQL): when receivers fall behind, the oldest are dropped and counted (parlor_webhook_dropped_total)") {
            $0.webhookQueueMax = try int($1, "--webhook-queue-max", 1...10_000_000)
        },
        option("--webhook-retry-for", "PARLOR_WEBHOOK_RETRY_FOR", "86400", "seconds a webhook is retried after its event (backoff doubling from 0.5 s to 5 min); a receiver down longer loses what is older, counted in parlor_webhook_dropped_total{reason=\"expired\"}") {
            $0.webhookRetrySeconds = try seconds($1, "--webhook-retry-for")
        },
        option("--webhook-ca-file", "PARLOR_WEBHOOK_CA_FILE", "system CA store", "PEM certificates that https:// webhook receivers are verified against instead of the system's (a self-signed or private-CA receiver); verification is never off") {
            $0.webhookCAFile = $1
        },
    ]
}
