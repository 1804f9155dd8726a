-- The same constraints on members and room_users, written as comparisons instead of `IN (…)` lists.
-- SQLite evaluates a CHECK with an IN list of three or more values by building an ephemeral B-tree (a 4 KiB page
-- zeroed, the values inserted, a lookup) on every INSERT and UPDATE of the row, whichever column changes: about
-- 17,000 instructions per membership write, on every join and leave. An OR of equalities checks the same values
-- without it. SQLite cannot alter a CHECK, so both tables are rebuilt (its 12-step ALTER; foreign keys are off
-- while a migration runs and checked before it commits).

CREATE TABLE members_new (
    id              TEXT PRIMARY KEY,
    room_id         TEXT NOT NULL REFERENCES rooms(id),
    user_id         TEXT NOT NULL REFERENCES users(id),
    state           TEXT NOT NULL CHECK (state = 'JOINED' OR state = 'LEFT'),
    joined_at       INTEGER NOT NULL,
    left_at         INTEGER,
    left_reason     TEXT CHECK (left_reason = 'left' OR left_reason = 'dropped' OR left_reason = 'kicked'
                                OR left_reason = 'room_closed'),
    audio_enabled   INTEGER NOT NULL DEFAULT 0,
    audio_muted     INTEGER NOT NULL DEFAULT 0,
    -- Set while no connection of the user is attached; the member drops after the grace period.
    disconnected_at INTEGER
);
INSERT INTO members_new (rowid, id, room_id, user_id, state, joined_at, left_at, left_reason, audio_enabled, audio_muted,
                         disconnected_at)
    SELECT rowid, id, room_id, user_id, state, joined_at, left_at, left_reason, audio_enabled, audio_muted, disconnected_at
    FROM members;
DROP TABLE members;
ALTER TABLE members_new RENAME TO members;
-- A user has at most one JOINED member per room (joins are idempotent).
CREATE UNIQUE INDEX members_one_joined ON members(room_id, user_id) WHERE state = 'JOINED';
CREATE INDEX members_by_room ON members(room_id, state, joined_at, id);

CREATE TABLE room_users_new (
    room_id        TEXT NOT NULL REFERENCES rooms(id),
    user_id        TEXT NOT NULL REFERENCES users(id),
    role           TEXT NOT NULL CHECK (role = 'moderator' OR role = 'speaker' OR role = 'listener'),
    -- When the hand went up (raised hands are listed in this order); NULL while it is down.
    hand_raised_at INTEGER,
    PRIMARY KEY (room_id, user_id)
) WITHOUT ROWID;
INSERT INTO room_users_new (room_id, user_id, role, hand_raised_at)
    SELECT room_id, user_id, role, hand_raised_at FROM room_users;
DROP TABLE room_users;
ALTER TABLE room_users_new RENAME TO room_users;
CREATE INDEX room_users_hands ON room_users(room_id, hand_raised_at) WHERE hand_raised_at IS NOT NULL;
