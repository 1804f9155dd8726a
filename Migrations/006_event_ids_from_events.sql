-- A room's event ids are allocated from its events: the next id is MAX(seq) + 1 of the room's rows in `events`,
-- read from the B-tree page the insert then writes. The counter column in `rooms` is gone: updating it put the
-- room's row (another page in the WAL) and one more statement into every stored event. Events are never deleted,
-- so MAX(seq) only grows, and the writer holds SQLite's one write lock until the commit, so ids are still
-- handed out in commit order. (Before this migration the column always equalled MAX(seq).)
ALTER TABLE rooms DROP COLUMN last_event_id;
