// SQLite's own page cache (pcache1) with one change: a truncation that has nothing to remove is not passed on.
//
// At the end of every transaction the pager truncates its cache to the database's size, and pcache1 scans for
// pages beyond it only if the highest key it has held since its last truncation is beyond it. But when a B-tree
// balance reorders sibling pages it parks one at a temporary key, the lock-byte page's number (262,145 with 4 KiB
// pages, a page that never holds data), and moves it back at once. pcache1 remembers 262,145 as its highest key,
// so the next truncation walks its whole hash table (every slot, every page: about 1,000 cache misses with a 4 MiB
// cache) to remove nothing. Rooms with many short ranges in one B-tree (a room's events, its members) rebalance
// often: 663 commits walked in 8 s under gdb at 400 commands a second, 5.6 % of the rooms thread's time at 10,000
// connections (bench/HISTORY.md, session 31).
//
// Here each cache keeps its own highest key, not counting that temporary key, and how many pages sit at the
// temporary key now. A truncation to iLimit goes to pcache1 only if a page may have a key of iLimit or more: the
// highest key (pages come in only by fetch and rekey, both seen here) or a page parked at the temporary key.
// Otherwise there is nothing it could remove, and skipping it changes nothing but pcache1's stale bound, which
// only decides how its next truncation scans. Everything else passes straight through.
#include "CParlorSQLiteVFS.h"

#include <pthread.h>
#include <sqlite3.h>

typedef struct BoundedCache {
    sqlite3_pcache *inner;
    unsigned highestKey;     // no page has a higher key, but maybe one at parkingKey
    unsigned parkingKey;     // the key a balance parks a page at: PENDING_BYTE / page size + 1
    int parked;              // pages moved to parkingKey and not yet moved away (never below 0)
    int parkingKeyFetched;   // a fetch returned a page at parkingKey: pass truncations on until one removes it
} BoundedCache;

static sqlite3_pcache_methods2 base;
static _Thread_local long long skippedCount, passedCount;

static int cacheInit(void *arg) { (void)arg; return base.xInit ? base.xInit(base.pArg) : SQLITE_OK; }
static void cacheShutdown(void *arg) { (void)arg; if (base.xShutdown) base.xShutdown(base.pArg); }

static sqlite3_pcache *cacheCreate(int pageSize, int extraSize, int purgeable) {
    BoundedCache *cache = sqlite3_malloc(sizeof(BoundedCache));
    if (cache == NULL) return NULL;
    cache->inner = base.xCreate(pageSize, extraSize, purgeable);
    if (cache->inner == NULL) {
        sqlite3_free(cache);
        return NULL;
    }
    cache->highestKey = 0;
    // SQLite's default PENDING_BYTE (0x40000000); only its test harness moves it. Were it elsewhere, parked pages
    // would count toward highestKey instead, and truncations would pass on as with pcache1 alone.
    cache->parkingKey = pageSize > 0 ? 0x40000000u / (unsigned)pageSize + 1 : 0;
    cache->parked = 0;
    cache->parkingKeyFetched = 0;
    return (sqlite3_pcache *)cache;
}

static BoundedCache *bounded(sqlite3_pcache *cache) { return (BoundedCache *)cache; }

static void cacheCachesize(sqlite3_pcache *cache, int size) { base.xCachesize(bounded(cache)->inner, size); }
static int cachePagecount(sqlite3_pcache *cache) { return base.xPagecount(bounded(cache)->inner); }

static sqlite3_pcache_page *cacheFetch(sqlite3_pcache *p, unsigned key, int create) {
    BoundedCache *cache = bounded(p);
    sqlite3_pcache_page *page = base.xFetch(cache->inner, key, create);
    if (page != NULL) {
        if (key == cache->parkingKey) cache->parkingKeyFetched = 1;
        else if (key > cache->highestKey) cache->highestKey = key;
    }
    return page;
}

static void cacheUnpin(sqlite3_pcache *cache, sqlite3_pcache_page *page, int discard) {
    base.xUnpin(bounded(cache)->inner, page, discard);
}

static void cacheRekey(sqlite3_pcache *p, sqlite3_pcache_page *page, unsigned oldKey, unsigned newKey) {
    BoundedCache *cache = bounded(p);
    base.xRekey(cache->inner, page, oldKey, newKey);
    if (oldKey == cache->parkingKey && cache->parked > 0) cache->parked -= 1;
    if (newKey == cache->parkingKey) cache->parked += 1;
    else if (newKey > cache->highestKey) cache->highestKey = newKey;
}

static void cacheTruncate(sqlite3_pcache *p, unsigned limit) {
    BoundedCache *cache = bounded(p);
    int parkingBeyond = (cache->parked > 0 || cache->parkingKeyFetched) && cache->parkingKey >= limit;
    if (cache->highestKey < limit && !parkingBeyond) {
        skippedCount += 1;
        return;
    }
    passedCount += 1;
    base.xTruncate(cache->inner, limit);
    if (cache->highestKey >= limit) cache->highestKey = limit > 0 ? limit - 1 : 0;
    if (cache->parkingKey >= limit) {
        cache->parked = 0;
        cache->parkingKeyFetched = 0;
    }
}

static void cacheDestroy(sqlite3_pcache *p) {
    BoundedCache *cache = bounded(p);
    base.xDestroy(cache->inner);
    sqlite3_free(cache);
}

static void cacheShrink(sqlite3_pcache *cache) { base.xShrink(bounded(cache)->inner); }

static int installed = SQLITE_ERROR;

static void installOnce(void) {
    // Both calls fail with SQLITE_MISUSE once SQLite has initialized (some code opened a database first): then the
    // process keeps pcache1 as it is.
    if (sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &base) != SQLITE_OK) return;
    if (base.iVersion < 1 || base.xCreate == NULL) return;
    static sqlite3_pcache_methods2 wrapper;
    wrapper = (sqlite3_pcache_methods2){
        .iVersion = 1, .pArg = NULL, .xInit = cacheInit, .xShutdown = cacheShutdown, .xCreate = cacheCreate,
        .xCachesize = cacheCachesize, .xPagecount = cachePagecount, .xFetch = cacheFetch, .xUnpin = cacheUnpin,
        .xRekey = cacheRekey, .xTruncate = cacheTruncate, .xDestroy = cacheDestroy, .xShrink = cacheShrink,
    };
    installed = sqlite3_config(SQLITE_CONFIG_PCACHE2, &wrapper);
}

int parlor_page_cache_install(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, installOnce);
    return installed;
}

void parlor_page_cache_counts(long long *skipped, long long *passed) {
    *skipped = skippedCount;
    *passed = passedCount;
}
