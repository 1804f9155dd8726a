-- Media where the connection is (issue 41): each node serves its own connections' media, and a speaker's packets
-- cross a media link once to each other node that listens in the room. A node listens in a room while it has a
-- media session there that receives, or records the room or streams it live. Each node writes only its own rows;
-- the nodes with speakers in the room read them (joined on `nodes.lease_until`, so a dead node's rows are ignored)
-- and the rows of a node gone from `nodes` are deleted by the next node to start.
CREATE TABLE media_room_listeners (
    room_id TEXT COLLATE "C" NOT NULL,
    node_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (room_id, node_id)
);
CREATE INDEX media_room_listeners_by_node ON media_room_listeners(node_id);
