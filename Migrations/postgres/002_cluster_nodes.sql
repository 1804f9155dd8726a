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
