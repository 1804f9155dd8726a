-- Recordings (issue 38): one row per recording of a room. The files are in <recordings-dir>/<id> on the node that
-- recorded it (`node`: the room's media home then). `stopped_at` is set when the recording is asked to stop or stops
-- by itself; `state` moves from recording to complete, interrupted (its node ended under it) or failed once the
-- recorder has finished its files, and `manifest` is then the recorder's manifest.json.

CREATE TABLE recordings (
    id          TEXT COLLATE "C" PRIMARY KEY,
    room_id     TEXT COLLATE "C" NOT NULL REFERENCES rooms(id),
    started_by  TEXT COLLATE "C",
    started_at  BIGINT NOT NULL,
    stopped_at  BIGINT,
    state       TEXT NOT NULL DEFAULT 'recording' CHECK (state IN ('recording', 'complete', 'interrupted', 'failed')),
    stop_reason TEXT,
    duration_ms BIGINT,
    node        TEXT COLLATE "C",
    manifest    TEXT
);
-- A room's recordings, newest first; one running (not stopped) per room at a time, whichever node starts it.
CREATE INDEX recordings_by_room ON recordings(room_id, started_at);
CREATE UNIQUE INDEX recordings_one_running ON recordings(room_id) WHERE stopped_at IS NULL;
-- Retention deletes the oldest.
CREATE INDEX recordings_by_start ON recordings(started_at);
