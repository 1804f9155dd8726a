#ifndef C_PARLOR_SQLITE_VFS_H
#define C_PARLOR_SQLITE_VFS_H

/// The name of the VFS that `parlor_wal_batch_register` adds: SQLite's default VFS with the writes of each
/// WAL commit coalesced (wal_batch.c).
#define PARLOR_WAL_BATCH_VFS "parlor-wal-batch"

/// Registers the VFS once (not as the default); returns an SQLite result code.
int parlor_wal_batch_register(void);

/// Writes the calling thread has issued to WAL files through this VFS, and the SQLite writes they carried (tests).
void parlor_wal_batch_counts(long long *flushes, long long *writes);

#endif
