-- Several identities may share a name (issue 17): a name in live use is not handed to whoever asks for it; they get
-- a separate identity shown with the same name. users.name stays the unique handle: the name itself for the name's
-- own identity (what tokens with sub = name mean), or, for a separate identity, U+001F followed by its id (no valid
-- name contains a control character, so no name or token subject can reach it), with display_name set.
ALTER TABLE users ADD COLUMN display_name TEXT;
-- SHA-256 (hex) of the claim secret last handed out with this identity by POST /auth; NULL before the first.
ALTER TABLE users ADD COLUMN claim_hash TEXT;
-- After an admin revocation: POST /auth and tokens are refused for this identity until then (Unix ms).
ALTER TABLE users ADD COLUMN blocked_until INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX users_by_claim ON users(claim_hash) WHERE claim_hash IS NOT NULL;
CREATE INDEX users_by_display_name ON users(display_name) WHERE display_name IS NOT NULL;
