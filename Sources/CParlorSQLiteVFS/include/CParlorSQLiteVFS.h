#ifndef C_PARLOR_SQLITE_VFS_H
#define C_PARLOR_SQLITE_VFS_H

/// The name of the VFS that `parlor_wal_batch_register` adds: SQLite's default VFS with the writes of each
/// WAL commit coalesced (wal_batch.c).
#define PARLOR_WAL_BATCH_VFS "parlor-wal-batch"

/// Registers the VFS once (not as the default); returns an SQLite result code.
int parlor_wal_batch_register(void);

/// Writes the calling thread has issued to WAL files through this VFS, and the SQLite writes they carried (tests).
void parlor_wal_batch_counts(long long *flushes, long long *writes);

/// Installs SQLite's default page cache wrapped so that a truncation with nothing to remove is skipped
/// (page_cache.c), once, before SQLite initializes; returns an SQLite result code (SQLITE_MISUSE if SQLite had
/// already initialized, which leaves its page cache as it was). `parlor_wal_batch_register` calls it first.
int parlor_page_cache_install(void);

/// Truncations the calling thread's connections skipped and passed on to SQLite's page cache (tests).
void parlor_page_cache_counts(long long *skipped, long long *passed);

#endif
