-- The media home (issue 11's media decision): with the forwarding unit, one node at a time serves a room's audio.
-- Chosen by the first media:offer in the room (the offering node, unless a live node already is the home); a home
-- whose node is gone is replaced at the next offer, and the node taking a dead node over clears its rooms' homes.

-- The node's forwarding unit as clients reach it ("ip:port" of each host candidate, comma-separated); NULL: mesh.
ALTER TABLE nodes ADD COLUMN media_address TEXT;
-- The node serving the room's audio; NULL: none yet (or its node died).
ALTER TABLE rooms ADD COLUMN media_node TEXT;

-- Messages between a room's media home and the nodes holding its members' WebSockets: offers and closes relayed to
-- the home, answers and slot assignments relayed back (an answer's SDP may exceed a NOTIFY's 8,000 bytes). The node
-- `node_id` is told by a NOTIFY "media relay NODE-…", and deletes the rows when it handles them.
CREATE TABLE media_relay (
    id         BIGSERIAL PRIMARY KEY,
    node_id    TEXT NOT NULL,
    room_id    TEXT NOT NULL,
    message    BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX media_relay_by_node ON media_relay(node_id, id);
