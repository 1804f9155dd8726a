-- Parlor's initial schema. Times are Unix milliseconds (UTC); ids are opaque strings (USR-, RM-, MEM-, SES-).

CREATE TABLE users (
    id                 TEXT PRIMARY KEY,
    name               TEXT NOT NULL UNIQUE,
    created_at         INTEGER NOT NULL,
    -- Tokens issued before this time are refused (revocation by user).
    tokens_valid_after INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE rooms (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    display_name  TEXT NOT NULL,
    created_by    TEXT REFERENCES users(id),
    created_at    INTEGER NOT NULL,
    closed_at     INTEGER,
    -- Properties: seconds an empty room is kept, and an optional member cap.
    ttl           INTEGER NOT NULL DEFAULT 300,
    max_members   INTEGER,
    -- Highest event sequence number issued in this room (events.seq).
    last_event_id INTEGER NOT NULL DEFAULT 0,
    -- When the room last became empty; NULL while someone is joined.
    empty_since   INTEGER
);
CREATE INDEX rooms_open_newest ON rooms(created_at DESC, id DESC) WHERE closed_at IS NULL;

CREATE TABLE members (
    id              TEXT PRIMARY KEY,
    room_id         TEXT NOT NULL REFERENCES rooms(id),
    user_id         TEXT NOT NULL REFERENCES users(id),
    state           TEXT NOT NULL CHECK (state IN ('JOINED', 'LEFT')),
    joined_at       INTEGER NOT NULL,
    left_at         INTEGER,
    left_reason     TEXT CHECK (left_reason IN ('left', 'dropped', 'kicked', 'room_closed')),
    audio_enabled   INTEGER NOT NULL DEFAULT 0,
    audio_muted     INTEGER NOT NULL DEFAULT 0,
    -- Set while no connection of the user is attached; the member drops after the grace period.
    disconnected_at INTEGER
);
-- A user has at most one JOINED member per room (joins are idempotent).
CREATE UNIQUE INDEX members_one_joined ON members(room_id, user_id) WHERE state = 'JOINED';
CREATE INDEX members_by_room ON members(room_id, state, joined_at, id);

CREATE TABLE events (
    room_id     TEXT NOT NULL REFERENCES rooms(id),
    seq         INTEGER NOT NULL,
    type        TEXT NOT NULL,
    from_member TEXT,
    body        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (room_id, seq)
) WITHOUT ROWID;

CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id),
    created_at INTEGER NOT NULL
);
