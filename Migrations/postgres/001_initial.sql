-- Parlor's schema in PostgreSQL's dialect: the SQLite schema of Migrations/001–004 as one step (no PostgreSQL
-- database predates it), plus the secrets every node shares. Times are Unix milliseconds (UTC, BIGINT); ids are
-- opaque strings (USR-, RM-, MEM-, SES-) compared bytewise (COLLATE "C"), as SQLite compares them, so pages and
-- cursors order the same on both stores.

CREATE TABLE users (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    -- The unique handle: the name itself, or U+001F and the id for a separate identity shown as display_name.
    name               TEXT NOT NULL UNIQUE,
    display_name       TEXT,
    -- SHA-256 (hex) of the claim secret last handed out with this identity by POST /auth.
    claim_hash         TEXT,
    created_at         BIGINT NOT NULL,
    -- Tokens issued before this time are refused (revocation by user).
    tokens_valid_after BIGINT NOT NULL DEFAULT 0,
    -- After an admin revocation: POST /auth and tokens are refused for this identity until then.
    blocked_until      BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX users_by_claim ON users(claim_hash) WHERE claim_hash IS NOT NULL;
CREATE INDEX users_by_display_name ON users(display_name) WHERE display_name IS NOT NULL;

CREATE TABLE rooms (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    display_name  TEXT NOT NULL,
    created_by    TEXT REFERENCES users(id),
    created_at    BIGINT NOT NULL,
    closed_at     BIGINT,
    ttl           BIGINT NOT NULL DEFAULT 300,
    max_members   BIGINT,
    -- Highest event sequence number issued in this room (events.seq); its row lock serialises event ids.
    last_event_id BIGINT NOT NULL DEFAULT 0,
    -- When the room last became empty; NULL while someone is joined.
    empty_since   BIGINT,
    -- The client address that created the room (the per-address cap on open rooms).
    created_from  TEXT,
    mode          TEXT NOT NULL DEFAULT 'open' CHECK (mode IN ('open', 'stage')),
    locked        BOOLEAN NOT NULL DEFAULT false
);
CREATE INDEX rooms_open_newest ON rooms(created_at DESC, id DESC) WHERE closed_at IS NULL;
CREATE INDEX rooms_open_by_address ON rooms(created_from) WHERE closed_at IS NULL;

CREATE TABLE members (
    id              TEXT COLLATE "C" PRIMARY KEY,
    room_id         TEXT NOT NULL REFERENCES rooms(id),
    user_id         TEXT NOT NULL REFERENCES users(id),
    state           TEXT NOT NULL CHECK (state IN ('JOINED', 'LEFT')),
    joined_at       BIGINT NOT NULL,
    left_at         BIGINT,
    left_reason     TEXT CHECK (left_reason IN ('left', 'dropped', 'kicked', 'room_closed')),
    audio_enabled   BOOLEAN NOT NULL DEFAULT false,
    audio_muted     BOOLEAN NOT NULL DEFAULT false,
    -- Set while no connection of the user is attached; the member drops after the grace period.
    disconnected_at BIGINT
);
-- A user has at most one JOINED member per room (joins are idempotent).
CREATE UNIQUE INDEX members_one_joined ON members(room_id, user_id) WHERE state = 'JOINED';
CREATE INDEX members_by_room ON members(room_id, state, joined_at, id);

CREATE TABLE events (
    room_id     TEXT NOT NULL REFERENCES rooms(id),
    seq         BIGINT NOT NULL,
    type        TEXT NOT NULL,
    from_member TEXT,
    -- The JSON text exactly as sent (not jsonb, which would reorder keys).
    body        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (room_id, seq)
);

CREATE TABLE sessions (
    id         TEXT COLLATE "C" PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id),
    created_at BIGINT NOT NULL,
    -- When the session's connection closed; NULL while it is live.
    ended_at   BIGINT
);
CREATE INDEX sessions_ended ON sessions(ended_at) WHERE ended_at IS NOT NULL;

-- A user's role and raised hand in a room, kept for the room's life; users without a row are speakers.
CREATE TABLE room_users (
    room_id        TEXT NOT NULL REFERENCES rooms(id),
    user_id        TEXT NOT NULL REFERENCES users(id),
    role           TEXT NOT NULL CHECK (role IN ('moderator', 'speaker', 'listener')),
    hand_raised_at BIGINT,
    PRIMARY KEY (room_id, user_id)
);
CREATE INDEX room_users_hands ON room_users(room_id, hand_raised_at) WHERE hand_raised_at IS NOT NULL;

-- A user (and its client address) banned from a room until `until`; expired rows are ignored.
CREATE TABLE room_bans (
    room_id        TEXT NOT NULL REFERENCES rooms(id),
    user_id        TEXT NOT NULL REFERENCES users(id),
    client_address TEXT,
    until          BIGINT NOT NULL,
    PRIMARY KEY (room_id, user_id)
);

-- Secrets every node must share (the JWT and webhook signing keys), created once by the first node that needs
-- them unless the operator configures them: a node never generates its own.
CREATE TABLE server_secrets (
    name       TEXT PRIMARY KEY,
    value      BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);
