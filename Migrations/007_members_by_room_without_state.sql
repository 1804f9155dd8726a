-- A room's members in join order, whatever their state: (room_id, joined_at, id) instead of
-- (room_id, state, joined_at, id). A leave changes `state`, which moved the member's entry from the JOINED to the
-- LEFT part of the old index (a delete and an insert, often on two pages); in this one it stays where it is, so a
-- leave writes one index fewer: 6.37 -> 5.63 WAL frames per single-command commit when leave/join churn is replayed
-- against the schema. The JOINED members of a room are listed through members_one_joined (partial, JOINED only);
-- the room's history (LEFT, or every state) and MAX(joined_at) through this index.
DROP INDEX members_by_room;
CREATE INDEX members_by_room ON members(room_id, joined_at, id);
