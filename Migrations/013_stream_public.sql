-- The live stream (issue 38): whether a room's stream is open to anyone with its link (room:stream:public), kept with
-- the room so it survives a restart and every node reads it.
ALTER TABLE rooms ADD COLUMN stream_public INTEGER NOT NULL DEFAULT 0;
