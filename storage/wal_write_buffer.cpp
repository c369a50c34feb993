// WAL write buffering VFS (see wal_write_buffer.hpp for why and for the invariants).
#include "storage/wal_write_buffer.hpp"

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

namespace wsindex::storage {
namespace {

constexpr const char* kVfsName = "wsindex-walbuf";
// 64 KiB: the unix VFS writes at most 128 KiB - 1 per call (its seekAndWrite masks the count
// to 17 bits; a larger write comes back short, as SQLITE_FULL). 16 frames of 4 KiB per write.
constexpr std::size_t kBufferBytes = std::size_t{64} << 10;
constexpr int kFrameHeaderBytes = 24;  // WAL_FRAME_HDRSIZE in SQLite's wal.c

std::atomic<std::uint64_t> g_frames_buffered{0};
std::atomic<std::uint64_t> g_writes{0};
std::atomic<std::uint64_t> g_commit_flushes{0};
std::atomic<std::uint64_t> g_late_flushes{0};

// Pending bytes of one log: file bytes [start, start + size) not yet written below.
struct PendingWrites {
    std::unique_ptr<char[]> bytes;  // kBufferBytes, allocated at the first buffered write
    sqlite3_int64 start = 0;
    std::size_t size = 0;
    // Offset just past the header of a commit frame whose page has not arrived yet; -1 if none.
    sqlite3_int64 commit_page_at = -1;
    // End of the last write to this log, buffered or not: the next frame starts there.
    sqlite3_int64 last_end = -1;
};

struct File {
    sqlite3_file base;       // base.pMethods: kMethods; first, so SQLite can use it as-is
    sqlite3_file* below;     // the default VFS's file, allocated right after this struct
    PendingWrites* pending;  // a log's buffer; nullptr for every other file
    File* partner;           // database <-> its log, for the barrier; cleared on close
};

sqlite3_vfs* g_below = nullptr;  // the default VFS, set once at registration

File* as_file(sqlite3_file* f) { return reinterpret_cast<File*>(f); }

int write_below(File* f, const void* data, int amount, sqlite3_int64 offset) {
    g_writes.fetch_add(1, std::memory_order_relaxed);
    return f->below->pMethods->xWrite(f->below, data, amount, offset);
}

// Writes out the buffered bytes (if any). On failure they are dropped, as a failed unbuffered
// write would have left them unwritten; SQLite sees the error and the transaction fails.
int flush(File* f) {
    PendingWrites* p = f->pending;
    if (p == nullptr || p->size == 0) return SQLITE_OK;
    const int rc = write_below(f, p->bytes.get(), static_cast<int>(p->size), p->start);
    p->size = 0;
    return rc;
}

bool is_commit_frame_header(const void* data, int amount) {
    if (amount != kFrameHeaderBytes) return false;
    // Bytes 4..7: the database size in pages after a commit frame, zero in every other frame.
    const auto* b = static_cast<const unsigned char*>(data);
    return (b[4] | b[5] | b[6] | b[7]) != 0;
}

// ---- io methods: the log's own go through the buffer, everything else straight below ----

int x_close(sqlite3_file* sf) {
    File* f = as_file(sf);
    const int flushed = flush(f);
    if (f->partner != nullptr) f->partner->partner = nullptr;
    delete f->pending;
    f->pending = nullptr;
    const int rc = f->below->pMethods != nullptr ? f->below->pMethods->xClose(f->below) : SQLITE_OK;
    return flushed != SQLITE_OK ? flushed : rc;
}

int x_read(sqlite3_file* sf, void* data, int amount, sqlite3_int64 offset) {
    File* f = as_file(sf);
    // Only a read of buffered bytes needs them on the file first: the writer reads pages of
    // earlier frames back from the log thousands of times a scan.
    const PendingWrites* p = f->pending;
    if (p != nullptr && p->size > 0 && offset < p->start + static_cast<sqlite3_int64>(p->size) &&
        offset + amount > p->start) {
        if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    }
    return f->below->pMethods->xRead(f->below, data, amount, offset);
}

int x_write(sqlite3_file* sf, const void* data, int amount, sqlite3_int64 offset) {
    File* f = as_file(sf);
    PendingWrites* p = f->pending;
    if (p == nullptr) return write_below(f, data, amount, offset);
    const auto n = static_cast<std::size_t>(amount);
    const bool commit_page = p->commit_page_at >= 0 && offset == p->commit_page_at;
    const sqlite3_int64 end = p->start + static_cast<sqlite3_int64>(p->size);
    const bool overlaps = p->size > 0 && offset < end && offset + amount > p->start;
    // Frames are appended one after the other; the log's header starts a restarted log.
    const bool sequential = offset == p->last_end || (p->size > 0 && offset == end) || offset == 0;
    p->last_end = offset + amount;
    if (overlaps && offset >= p->start && offset + amount <= end) {
        // Inside what is buffered: the later bytes win, as they would on the file.
        std::memcpy(p->bytes.get() + (offset - p->start), data, n);
        g_frames_buffered.fetch_add(1, std::memory_order_relaxed);
    } else if (!sequential || n > kBufferBytes) {
        // Not the next frame (SQLite rewriting a frame, or the checksums in the headers of a
        // transaction's frames, in place): straight to the file. Bytes disjoint from the
        // buffer's may go before them (disjoint writes commute); overlapping ones may not.
        if (overlaps) {
            if (const int rc = flush(f); rc != SQLITE_OK) return rc;
        }
        if (const int rc = write_below(f, data, amount, offset); rc != SQLITE_OK) return rc;
    } else {
        // The next frame: appended, or the first bytes of a buffer. A buffer elsewhere, or a
        // full one, is written out first.
        if (p->size > 0 && (offset != end || p->size + n > kBufferBytes)) {
            if (const int rc = flush(f); rc != SQLITE_OK) return rc;
        }
        if (!p->bytes) p->bytes = std::make_unique_for_overwrite<char[]>(kBufferBytes);
        if (p->size == 0) p->start = offset;
        std::memcpy(p->bytes.get() + p->size, data, n);
        p->size += n;
        g_frames_buffered.fetch_add(1, std::memory_order_relaxed);
    }
    if (commit_page) {
        g_commit_flushes.fetch_add(1, std::memory_order_relaxed);
        return flush(f);  // the commit is on the file before this write returns
    }
    p->commit_page_at = is_commit_frame_header(data, amount) ? offset + amount : -1;
    return SQLITE_OK;
}

int x_truncate(sqlite3_file* sf, sqlite3_int64 size) {
    File* f = as_file(sf);
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return f->below->pMethods->xTruncate(f->below, size);
}

int x_sync(sqlite3_file* sf, int flags) {
    File* f = as_file(sf);
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return f->below->pMethods->xSync(f->below, flags);
}

int x_file_size(sqlite3_file* sf, sqlite3_int64* size) {
    File* f = as_file(sf);
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return f->below->pMethods->xFileSize(f->below, size);
}

int x_lock(sqlite3_file* sf, int level) {
    File* f = as_file(sf);
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return f->below->pMethods->xLock(f->below, level);
}

int x_unlock(sqlite3_file* sf, int level) {
    File* f = as_file(sf);
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return f->below->pMethods->xUnlock(f->below, level);
}

int x_check_reserved_lock(sqlite3_file* sf, int* out) {
    File* f = as_file(sf);
    return f->below->pMethods->xCheckReservedLock(f->below, out);
}

int x_file_control(sqlite3_file* sf, int op, void* arg) {
    File* f = as_file(sf);
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    if (op == SQLITE_FCNTL_VFSNAME && arg != nullptr) {
        // Report ours on top of the one below, as SQLite's own shims do.
        const int rc = f->below->pMethods->xFileControl(f->below, op, arg);
        char** name = static_cast<char**>(arg);
        char* below = rc == SQLITE_OK ? *name : nullptr;
        *name = sqlite3_mprintf("%s/%z", kVfsName, below);
        return SQLITE_OK;
    }
    return f->below->pMethods->xFileControl(f->below, op, arg);
}

int x_sector_size(sqlite3_file* sf) {
    File* f = as_file(sf);
    return f->below->pMethods->xSectorSize(f->below);
}

int x_device_characteristics(sqlite3_file* sf) {
    File* f = as_file(sf);
    return f->below->pMethods->xDeviceCharacteristics(f->below);
}

int x_shm_map(sqlite3_file* sf, int page, int page_size, int extend, void volatile** out) {
    File* f = as_file(sf);
    return f->below->pMethods->xShmMap(f->below, page, page_size, extend, out);
}

// A write to the log's buffer that reaches the barrier is a commit this VFS did not see end
// (or frames SQLite rolled back): written out before SQLite publishes the new WAL-index header.
void flush_partner_log(File* f) {
    File* log = f->partner;
    if (log == nullptr || log->pending == nullptr || log->pending->size == 0) return;
    g_late_flushes.fetch_add(1, std::memory_order_relaxed);
    (void)flush(log);  // no way to report from here; a failed write fails the next commit
}

int x_shm_lock(sqlite3_file* sf, int offset, int n, int flags) {
    File* f = as_file(sf);
    flush_partner_log(f);
    return f->below->pMethods->xShmLock(f->below, offset, n, flags);
}

void x_shm_barrier(sqlite3_file* sf) {
    File* f = as_file(sf);
    flush_partner_log(f);
    f->below->pMethods->xShmBarrier(f->below);
}

int x_shm_unmap(sqlite3_file* sf, int delete_flag) {
    File* f = as_file(sf);
    return f->below->pMethods->xShmUnmap(f->below, delete_flag);
}

int x_fetch(sqlite3_file* sf, sqlite3_int64 offset, int amount, void** out) {
    File* f = as_file(sf);
    if (const int rc = flush(f); rc != SQLITE_OK) return rc;
    return f->below->pMethods->xFetch(f->below, offset, amount, out);
}

int x_unfetch(sqlite3_file* sf, sqlite3_int64 offset, void* page) {
    File* f = as_file(sf);
    return f->below->pMethods->xUnfetch(f->below, offset, page);
}

// Version 3 (shared memory and memory mapping), as the unix VFS's files.
const sqlite3_io_methods kMethods = {
    3,
    x_close,
    x_read,
    x_write,
    x_truncate,
    x_sync,
    x_file_size,
    x_lock,
    x_unlock,
    x_check_reserved_lock,
    x_file_control,
    x_sector_size,
    x_device_characteristics,
    x_shm_map,
    x_shm_lock,
    x_shm_barrier,
    x_shm_unmap,
    x_fetch,
    x_unfetch,
};

// ---- the VFS: opens below, wraps, everything else is the default VFS's ----

int x_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* sf, int flags, int* out_flags) {
    File* f = as_file(sf);
    f->below = reinterpret_cast<sqlite3_file*>(f + 1);
    f->pending = nullptr;
    f->partner = nullptr;
    f->base.pMethods = nullptr;  // SQLite calls no method of a file that failed to open
    const int rc = g_below->xOpen(g_below, name, f->below, flags, out_flags);
    if (rc != SQLITE_OK) return rc;
    // Only files whose methods are the ones this VFS forwards to (version 3) are wrapped.
    if (f->below->pMethods == nullptr || f->below->pMethods->iVersion < 3) {
        if (f->below->pMethods != nullptr) f->below->pMethods->xClose(f->below);
        return SQLITE_CANTOPEN;
    }
    if ((flags & SQLITE_OPEN_WAL) != 0 && name != nullptr) {
        f->pending = new (std::nothrow) PendingWrites();
        // The database's file: its barrier writes this log's buffer out.
        File* db = as_file(sqlite3_database_file_object(name));
        if (db != nullptr && db->base.pMethods == &kMethods) {
            db->partner = f;
            f->partner = db;
        }
    }
    f->base.pMethods = &kMethods;
    return SQLITE_OK;
}

int x_delete(sqlite3_vfs*, const char* name, int sync_dir) {
    return g_below->xDelete(g_below, name, sync_dir);
}
int x_access(sqlite3_vfs*, const char* name, int flags, int* out) {
    return g_below->xAccess(g_below, name, flags, out);
}
int x_full_pathname(sqlite3_vfs*, const char* name, int size, char* out) {
    return g_below->xFullPathname(g_below, name, size, out);
}
void* x_dl_open(sqlite3_vfs*, const char* name) { return g_below->xDlOpen(g_below, name); }
void x_dl_error(sqlite3_vfs*, int size, char* out) { g_below->xDlError(g_below, size, out); }
void (*x_dl_sym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
    return g_below->xDlSym(g_below, handle, symbol);
}
void x_dl_close(sqlite3_vfs*, void* handle) { g_below->xDlClose(g_below, handle); }
int x_randomness(sqlite3_vfs*, int size, char* out) {
    return g_below->xRandomness(g_below, size, out);
}
int x_sleep(sqlite3_vfs*, int micros) { return g_below->xSleep(g_below, micros); }
int x_current_time(sqlite3_vfs*, double* out) { return g_below->xCurrentTime(g_below, out); }
int x_get_last_error(sqlite3_vfs*, int size, char* out) {
    return g_below->xGetLastError(g_below, size, out);
}
int x_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) {
    return g_below->xCurrentTimeInt64(g_below, out);
}

sqlite3_vfs g_vfs{};

}  // namespace

const char* wal_buffering_vfs() {
    static std::once_flag once;
    static bool registered = false;
    std::call_once(once, [] {
        sqlite3_vfs* below = sqlite3_vfs_find(nullptr);
        if (below == nullptr || below->iVersion < 2) return;
        g_below = below;
        g_vfs.iVersion = 2;
        g_vfs.szOsFile = static_cast<int>(sizeof(File)) + below->szOsFile;
        g_vfs.mxPathname = below->mxPathname;
        g_vfs.zName = kVfsName;
        g_vfs.xOpen = x_open;
        g_vfs.xDelete = x_delete;
        g_vfs.xAccess = x_access;
        g_vfs.xFullPathname = x_full_pathname;
        g_vfs.xDlOpen = x_dl_open;
        g_vfs.xDlError = x_dl_error;
        g_vfs.xDlSym = x_dl_sym;
        g_vfs.xDlClose = x_dl_close;
        g_vfs.xRandomness = x_randomness;
        g_vfs.xSleep = x_sleep;
        g_vfs.xCurrentTime = x_current_time;
        g_vfs.xGetLastError = x_get_last_error;
        g_vfs.xCurrentTimeInt64 = x_current_time_int64;
        registered = sqlite3_vfs_register(&g_vfs, 0) == SQLITE_OK;
    });
    return registered ? kVfsName : nullptr;
}

WalBufferStats wal_buffer_stats() {
    return WalBufferStats{g_frames_buffered.load(), g_writes.load(), g_commit_flushes.load(),
                          g_late_flushes.load()};
}

}  // namespace wsindex::storage
