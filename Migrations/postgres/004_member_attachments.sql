-- Which nodes have a connection of a JOINED member attached (issue 11): a user may be in one room through
-- connections on several nodes. The membership is held by one node at a time (members.node_id); when that node's
-- last connection of it closes, it hands the membership to another live node with a row here, so the member stays
-- present while any node still has a connection of it attached, and is away (its grace period, then one drop) only
-- once none has. A node's rows go when its connections detach, with the membership's end, or with its takeover.

CREATE TABLE member_attachments (
    member_id TEXT COLLATE "C" NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    node_id   TEXT NOT NULL,
    PRIMARY KEY (member_id, node_id)
);
CREATE INDEX member_attachments_by_node ON member_attachments(node_id);

-- POST /auth asks whether a user has a session open on any live node (the "name in live use" check).
CREATE INDEX sessions_open_by_user ON sessions(user_id) WHERE ended_at IS NULL;
