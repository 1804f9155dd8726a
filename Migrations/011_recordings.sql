-- Recordings (issue 38): one row per recording of a room. The files are in <recordings-dir>/<id> on the node that
-- recorded it (`node`: NULL with one node). `stopped_at` is set when the recording is asked to stop or stops by
-- itself; `state` moves from recording to complete, interrupted (the process ended under it) or failed once the
-- recorder has finished its files, and `manifest` is then the recorder's manifest.json.

CREATE TABLE recordings (
    id          TEXT PRIMARY KEY,
    room_id     TEXT NOT NULL REFERENCES rooms(id),
    started_by  TEXT,
    started_at  INTEGER NOT NULL,
    stopped_at  INTEGER,
    state       TEXT NOT NULL DEFAULT 'recording' CHECK (state IN ('recording', 'complete', 'interrupted', 'failed')),
    stop_reason TEXT,
    duration_ms INTEGER,
    node        TEXT,
    manifest    TEXT
);
-- A room's recordings, newest first; one running (not stopped) per room at a time.
CREATE INDEX recordings_by_room ON recordings(room_id, started_at);
CREATE UNIQUE INDEX recordings_one_running ON recordings(room_id) WHERE stopped_at IS NULL;
-- Retention deletes the oldest.
CREATE INDEX recordings_by_start ON recordings(started_at);
