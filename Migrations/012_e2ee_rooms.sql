-- End-to-end encrypted rooms (issue 40): set when the room is created and never changed. The server keeps no key;
-- an encrypted room's chat is stored as the members' ciphertext in the events' bodies.
ALTER TABLE rooms ADD COLUMN e2ee INTEGER NOT NULL DEFAULT 0 CHECK (e2ee IN (0, 1));
