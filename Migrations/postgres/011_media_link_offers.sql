-- Media links between nodes (issue 41): each node with --cluster-media-address publishes where other nodes send it
-- media and its signed link offer (ParlorMediaLink's LinkOffer bytes: node id, epoch, ephemeral X25519 public key,
-- creation time, HMAC under the cluster secret). A node replaces its row when it renews the offer and deletes it at
-- a clean stop; the row of a node that died is ignored once its `nodes` row is gone or its lease has ended.
CREATE TABLE media_link_offers (
    node_id    TEXT COLLATE "C" PRIMARY KEY,
    address    TEXT NOT NULL,
    offer      BYTEA NOT NULL,
    -- Unix ms by the database's clock.
    updated_at BIGINT NOT NULL
);
