-- Several Parlor nodes on one database (issue 11, phase 2). Each running process is a node with a lease it renews
-- (a heartbeat); a membership and a session record the node that holds them, so that when a node's lease ends a
-- surviving node takes over exactly its members (deleting the node's row decides who does, once).

CREATE TABLE nodes (
    id          TEXT COLLATE "C" PRIMARY KEY,
    started_at  BIGINT NOT NULL,
    -- Unix ms by the database's clock (every node compares against the same clock).
    lease_until BIGINT NOT NULL
);

-- NULL: written before nodes existed, or by a store used without a node (tests of the rooms domain).
ALTER TABLE members ADD COLUMN node_id TEXT;
ALTER TABLE sessions ADD COLUMN node_id TEXT;
CREATE INDEX members_joined_by_node ON members(node_id) WHERE state = 'JOINED';
CREATE INDEX sessions_open_by_node ON sessions(node_id) WHERE ended_at IS NULL;

-- WebRTC signalling (rtc:*) to a member held by another node: too large for a NOTIFY (an SDP may be 16 KiB), so
-- it waits here for that node, which deletes it when it delivers it. Rows of a node that died go with its takeover.
CREATE TABLE signals (
    id         BIGSERIAL PRIMARY KEY,
    node_id    TEXT NOT NULL,
    room_id    TEXT NOT NULL,
    to_member  TEXT NOT NULL,
    frame      BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX signals_by_node ON signals(node_id, id);
