// SQLite's default VFS with one change: the frames of a WAL commit reach the file in one pwrite.
//
// SQLite writes each WAL frame as two writes (its 24-byte header, then the page), so a commit of six pages cost
// twelve pwrite calls, each taking the file's locks and updating its times; on ext4 that was 12 % of the server's
// CPU in rooms of 10 (bench/HISTORY.md). Here a WAL file buffers writes that continue where the last one ended and
// hands them to the real file in one write when the commit frame is complete: a frame header whose second word
// (the database size after the commit) is not zero marks the commit, and its page ends it. So a commit's frames
// are in the file, or its error returned to SQLite, before SQLite publishes the commit in the wal-index, exactly
// as with the plain VFS. A commit header that does not follow buffered frames (a commit of one frame, or SQLite
// rewriting the checksums of frames it overwrote) goes straight to the file, as does its page. Anything else done
// to a WAL file (read, sync, truncate, size, file control, close), a write elsewhere in it, or a full buffer
// writes the buffer out first, so frames a transaction spills before its commit are never read back from a
// half-written file. Databases and other files pass straight through.
#include "CParlorSQLiteVFS.h"

#include <pthread.h>
#include <sqlite3.h>
#include <string.h>

// The unix VFS writes at most 128 KiB - 1 per call (seekAndWriteFd masks the length with 0x1ffff; a write of a
// multiple of 128 KiB fails as SQLITE_FULL), so the buffer stays under that: 29 frames of 4 KiB.
enum { BUFFER_CAPACITY = 120 * 1024 };

typedef struct BatchFile {
    sqlite3_file base;
    sqlite3_file *real;       // the default VFS's file, allocated right after this struct
    int isWAL;
    sqlite3_int64 commitPageOffset;  // where the page of the commit frame whose header was just written goes, or -1
    unsigned char *buffer;    // WAL only, allocated on the first buffered write
    int used;
    sqlite3_int64 start;      // file offset of buffer[0]
} BatchFile;

static sqlite3_vfs batchVFS;
static sqlite3_vfs *realVFS;
static sqlite3_io_methods batchMethods;
// Per thread, so a test can count its own commits while others run.
static _Thread_local long long flushCount, writeCount;

static int flush(BatchFile *file) {
    if (file->used == 0) return SQLITE_OK;
    int used = file->used;
    file->used = 0;
    flushCount += 1;
    return file->real->pMethods->xWrite(file->real, file->buffer, used, file->start);
}

static int batchClose(sqlite3_file *f) {
    BatchFile *file = (BatchFile *)f;
    int rc = flush(file);
    int closed = file->real->pMethods->xClose(file->real);
    sqlite3_free(file->buffer);
    file->buffer = NULL;
    return rc != SQLITE_OK ? rc : closed;
}

static int batchRead(sqlite3_file *f, void *data, int amount, sqlite3_int64 offset) {
    BatchFile *file = (BatchFile *)f;
    int rc = flush(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xRead(file->real, data, amount, offset);
}

static int writeThrough(BatchFile *file, const void *data, int amount, sqlite3_int64 offset) {
    flushCount += 1;
    return file->real->pMethods->xWrite(file->real, data, amount, offset);
}

static int batchWrite(sqlite3_file *f, const void *data, int amount, sqlite3_int64 offset) {
    BatchFile *file = (BatchFile *)f;
    if (!file->isWAL) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    writeCount += 1;
    if (file->used > 0 && (offset != file->start + file->used || file->used + amount > BUFFER_CAPACITY)) {
        int rc = flush(file);
        if (rc != SQLITE_OK) return rc;
    }
    const unsigned char *bytes = data;
    int isCommitPage = offset == file->commitPageOffset;
    file->commitPageOffset = -1;
    if (amount == 24 && (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0) {  // the header of a commit frame
        file->commitPageOffset = offset + 24;
        if (file->used == 0) return writeThrough(file, data, amount, offset);
    } else if (isCommitPage && file->used == 0) {
        return writeThrough(file, data, amount, offset);
    }
    if (amount > BUFFER_CAPACITY) return writeThrough(file, data, amount, offset);
    if (file->buffer == NULL && (file->buffer = sqlite3_malloc(BUFFER_CAPACITY)) == NULL) {
        return writeThrough(file, data, amount, offset);
    }
    if (file->used == 0) file->start = offset;
    memcpy(file->buffer + file->used, data, (size_t)amount);
    file->used += amount;
    return isCommitPage ? flush(file) : SQLITE_OK;
}

static int batchTruncate(sqlite3_file *f, sqlite3_int64 size) {
    BatchFile *file = (BatchFile *)f;
    int rc = flush(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xTruncate(file->real, size);
}

static int batchSync(sqlite3_file *f, int flags) {
    BatchFile *file = (BatchFile *)f;
    int rc = flush(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xSync(file->real, flags);
}

static int batchFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    BatchFile *file = (BatchFile *)f;
    int rc = flush(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xFileSize(file->real, size);
}

static int batchLock(sqlite3_file *f, int level) {
    BatchFile *file = (BatchFile *)f;
    return file->real->pMethods->xLock(file->real, level);
}

static int batchUnlock(sqlite3_file *f, int level) {
    BatchFile *file = (BatchFile *)f;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int batchCheckReservedLock(sqlite3_file *f, int *result) {
    BatchFile *file = (BatchFile *)f;
    return file->real->pMethods->xCheckReservedLock(file->real, result);
}

static int batchFileControl(sqlite3_file *f, int op, void *arg) {
    BatchFile *file = (BatchFile *)f;
    int rc = flush(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xFileControl(file->real, op, arg);
}

static int batchSectorSize(sqlite3_file *f) {
    BatchFile *file = (BatchFile *)f;
    return file->real->pMethods->xSectorSize(file->real);
}

static int batchDeviceCharacteristics(sqlite3_file *f) {
    BatchFile *file = (BatchFile *)f;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int batchShmMap(sqlite3_file *f, int page, int pageSize, int extend, void volatile **mapped) {
    BatchFile *file = (BatchFile *)f;
    if (file->real->pMethods->iVersion < 2) return SQLITE_IOERR_SHMMAP;
    return file->real->pMethods->xShmMap(file->real, page, pageSize, extend, mapped);
}

static int batchShmLock(sqlite3_file *f, int offset, int count, int flags) {
    BatchFile *file = (BatchFile *)f;
    if (file->real->pMethods->iVersion < 2) return SQLITE_IOERR_SHMLOCK;
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void batchShmBarrier(sqlite3_file *f) {
    BatchFile *file = (BatchFile *)f;
    if (file->real->pMethods->iVersion >= 2) file->real->pMethods->xShmBarrier(file->real);
}

static int batchShmUnmap(sqlite3_file *f, int deleteFlag) {
    BatchFile *file = (BatchFile *)f;
    if (file->real->pMethods->iVersion < 2) return SQLITE_OK;
    return file->real->pMethods->xShmUnmap(file->real, deleteFlag);
}

static int batchFetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **pointer) {
    BatchFile *file = (BatchFile *)f;
    *pointer = NULL;
    int rc = flush(file);
    if (rc != SQLITE_OK || file->real->pMethods->iVersion < 3) return rc;
    return file->real->pMethods->xFetch(file->real, offset, amount, pointer);
}

static int batchUnfetch(sqlite3_file *f, sqlite3_int64 offset, void *pointer) {
    BatchFile *file = (BatchFile *)f;
    if (file->real->pMethods->iVersion < 3) return SQLITE_OK;
    return file->real->pMethods->xUnfetch(file->real, offset, pointer);
}

static int batchOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
    (void)vfs;
    BatchFile *file = (BatchFile *)f;
    memset(file, 0, sizeof(*file));
    file->real = (sqlite3_file *)&file[1];
    int rc = realVFS->xOpen(realVFS, name, file->real, flags, outFlags);
    if (file->real->pMethods == NULL) {
        file->base.pMethods = NULL;
        return rc;
    }
    file->commitPageOffset = -1;
    file->isWAL = (flags & SQLITE_OPEN_WAL) != 0;
    file->base.pMethods = &batchMethods;
    return rc;
}

static int batchDelete(sqlite3_vfs *vfs, const char *name, int syncDir) {
    (void)vfs;
    return realVFS->xDelete(realVFS, name, syncDir);
}

static int batchAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return realVFS->xAccess(realVFS, name, flags, result);
}

static int batchFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return realVFS->xFullPathname(realVFS, name, size, out);
}

static void *batchDlOpen(sqlite3_vfs *vfs, const char *name) { (void)vfs; return realVFS->xDlOpen(realVFS, name); }
static void batchDlError(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; realVFS->xDlError(realVFS, size, out); }
static void (*batchDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return realVFS->xDlSym(realVFS, handle, symbol);
}
static void batchDlClose(sqlite3_vfs *vfs, void *handle) { (void)vfs; realVFS->xDlClose(realVFS, handle); }
static int batchRandomness(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return realVFS->xRandomness(realVFS, size, out); }
static int batchSleep(sqlite3_vfs *vfs, int microseconds) { (void)vfs; return realVFS->xSleep(realVFS, microseconds); }
static int batchCurrentTime(sqlite3_vfs *vfs, double *now) { (void)vfs; return realVFS->xCurrentTime(realVFS, now); }
static int batchGetLastError(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return realVFS->xGetLastError(realVFS, size, out); }
static int batchCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return realVFS->xCurrentTimeInt64(realVFS, now);
}

static int registered = SQLITE_ERROR;

static void registerOnce(void) {
    parlor_page_cache_install();  // before sqlite3_vfs_find initializes SQLite, which fixes its page cache
    realVFS = sqlite3_vfs_find(NULL);
    if (realVFS == NULL || realVFS->iVersion < 2) return;
    batchMethods = (sqlite3_io_methods){
        .iVersion = 3, .xClose = batchClose, .xRead = batchRead, .xWrite = batchWrite, .xTruncate = batchTruncate,
        .xSync = batchSync, .xFileSize = batchFileSize, .xLock = batchLock, .xUnlock = batchUnlock,
        .xCheckReservedLock = batchCheckReservedLock, .xFileControl = batchFileControl, .xSectorSize = batchSectorSize,
        .xDeviceCharacteristics = batchDeviceCharacteristics, .xShmMap = batchShmMap, .xShmLock = batchShmLock,
        .xShmBarrier = batchShmBarrier, .xShmUnmap = batchShmUnmap, .xFetch = batchFetch, .xUnfetch = batchUnfetch,
    };
    batchVFS = (sqlite3_vfs){
        .iVersion = 2, .szOsFile = (int)sizeof(BatchFile) + realVFS->szOsFile, .mxPathname = realVFS->mxPathname,
        .zName = PARLOR_WAL_BATCH_VFS, .xOpen = batchOpen, .xDelete = batchDelete, .xAccess = batchAccess,
        .xFullPathname = batchFullPathname, .xDlOpen = batchDlOpen, .xDlError = batchDlError, .xDlSym = batchDlSym,
        .xDlClose = batchDlClose, .xRandomness = batchRandomness, .xSleep = batchSleep,
        .xCurrentTime = batchCurrentTime, .xGetLastError = batchGetLastError,
        .xCurrentTimeInt64 = batchCurrentTimeInt64,
    };
    registered = sqlite3_vfs_register(&batchVFS, 0);
}

int parlor_wal_batch_register(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, registerOnce);
    return registered;
}

void parlor_wal_batch_counts(long long *flushes, long long *writes) {
    *flushes = flushCount;
    *writes = writeCount;
}
