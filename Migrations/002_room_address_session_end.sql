-- Abuse limits and housekeeping (issue 17).

-- The client address that created the room, so the per-address cap on open rooms survives restarts.
-- NULL for rooms created before this migration.
ALTER TABLE rooms ADD COLUMN created_from TEXT;
CREATE INDEX rooms_open_by_address ON rooms(created_from) WHERE closed_at IS NULL;

-- When the session's connection closed; NULL while it is live. Ended sessions are deleted once they are older
-- than the grace period (they can no longer be resumed).
ALTER TABLE sessions ADD COLUMN ended_at INTEGER;
CREATE INDEX sessions_ended ON sessions(ended_at) WHERE ended_at IS NOT NULL;
