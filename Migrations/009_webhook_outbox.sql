-- The webhook outbox (issue 34): webhooks wait here, not in memory, written in the rooms transaction that commits
-- the events they announce, so a restart or a crash loses none (delivered at least once; the body's "id" is the
-- idempotency key). One row per webhook and receiver URL; a receiver's rows go in `sequence` order and are deleted
-- once it answered 2xx. The server keeps at most --webhook-queue-max rows, dropping the oldest.

CREATE TABLE webhook_outbox (
    sequence   INTEGER PRIMARY KEY,
    target     TEXT NOT NULL,
    event      TEXT NOT NULL,
    body       BLOB NOT NULL,
    created_at INTEGER NOT NULL
);
-- A receiver's rows in order.
CREATE INDEX webhook_outbox_by_target ON webhook_outbox(target, sequence);
