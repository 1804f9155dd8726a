-- Issue 34 (as SQLite's 010_identity_hardening.sql): POST /auth does not hand a name's identity to whoever asks
-- while that identity runs a room still open (its creator, or a moderator). These answer "does this user run an
-- open room?" without scanning rooms.
CREATE INDEX rooms_open_by_creator ON rooms(created_by) WHERE closed_at IS NULL AND created_by IS NOT NULL;
CREATE INDEX room_users_moderators ON room_users(user_id) WHERE role = 'moderator';
