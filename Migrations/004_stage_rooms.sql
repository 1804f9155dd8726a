-- Stage rooms (issue 14): a room's mode and lock, each user's role and raised hand in a room, and bans.

-- 'open': everyone may speak (as before); 'stage': moderators and speakers speak, listeners raise hands.
ALTER TABLE rooms ADD COLUMN mode TEXT NOT NULL DEFAULT 'open' CHECK (mode IN ('open', 'stage'));
-- While 1, only users already known to the room (room_users) may join; members who drop may still resume.
ALTER TABLE rooms ADD COLUMN locked INTEGER NOT NULL DEFAULT 0;

-- A user's role and raised hand in a room, kept for the room's life: leaving and joining again keeps them.
-- Users without a row are speakers (an open room stores none for its speakers, nor did rooms before this migration).
CREATE TABLE room_users (
    room_id        TEXT NOT NULL REFERENCES rooms(id),
    user_id        TEXT NOT NULL REFERENCES users(id),
    role           TEXT NOT NULL CHECK (role IN ('moderator', 'speaker', 'listener')),
    -- When the hand went up (raised hands are listed in this order); NULL while it is down.
    hand_raised_at INTEGER,
    PRIMARY KEY (room_id, user_id)
) WITHOUT ROWID;
CREATE INDEX room_users_hands ON room_users(room_id, hand_raised_at) WHERE hand_raised_at IS NOT NULL;

-- A user banned from a room until `until` (Unix ms), with the client address its connection had (the address
-- is banned too, for the same time); expired rows are ignored.
CREATE TABLE room_bans (
    room_id        TEXT NOT NULL REFERENCES rooms(id),
    user_id        TEXT NOT NULL REFERENCES users(id),
    client_address TEXT,
    until          INTEGER NOT NULL,
    PRIMARY KEY (room_id, user_id)
) WITHOUT ROWID;
