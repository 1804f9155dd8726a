-- The webhook outbox (issue 34): webhooks wait here, written in the rooms transaction that commits the events they
-- announce, so a restart or a crash loses none (delivered at least once; the body's "id" is the idempotency key).
-- One row per webhook and receiver URL, held by the node that wrote it (its delivery threads send and delete it);
-- the rows of a node whose lease ran out are taken over by a live node, which delivers them. Each node keeps at
-- most --webhook-queue-max rows of its own, dropping the oldest.

CREATE TABLE webhook_outbox (
    sequence   BIGSERIAL PRIMARY KEY,
    node_id    TEXT COLLATE "C" NOT NULL,
    target     TEXT COLLATE "C" NOT NULL,
    event      TEXT NOT NULL,
    body       BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);
-- A node's rows for a receiver in order.
CREATE INDEX webhook_outbox_by_node ON webhook_outbox(node_id, target, sequence);
