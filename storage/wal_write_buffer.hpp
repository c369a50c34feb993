// WAL write buffering: a SQLite VFS over the default one that gathers the write-ahead log's
// frame writes in memory and hands them to the kernel in large writes.
//
// Why: SQLite writes every WAL frame as two pwrite() calls (a 24-byte header, then the page),
// ~50k system calls for a 1M-entry scan, all on the writer thread, the ingest's critical path.
// Gathered into 64 KiB writes they are ~1,500 (wal_write_buffer.cpp says why not larger).
//
// What keeps it correct (the invariants, checked in wal_write_buffer.cpp):
// - The file always ends up with the bytes unbuffered writes would have left. Only frames
//   written one after the other are gathered; a write inside the buffered range overwrites it
//   there; any other write (SQLite rewriting a frame or a frame's checksums in place) goes
//   straight to the file, after the buffer if the two overlap (disjoint writes commute). A read
//   of buffered bytes, and every size, truncate, sync, lock and file control of the log, first
//   write the buffer out.
// - A commit is on the file before SQLite publishes it: the page of a commit frame (its
//   header's "database size" field is non-zero) writes the buffer out in that same xWrite,
//   so a full disk fails the commit with SQLITE_FULL like an unbuffered write. As a second
//   guard, xShmBarrier and xShmLock of the database (SQLite calls the barrier between writing
//   the two copies of the new WAL-index header) write out anything still buffered.
// - What can be lost in a crash is only what was never committed, which recovery ignores.
#pragma once

#include <cstdint>

namespace wsindex::storage {

// Registers the VFS on first use (not as the default) and returns its name for
// sqlite3_open_v2, or nullptr if it could not be registered (then open with the default).
const char* wal_buffering_vfs();

// Counters of this process's buffered logs, for tests.
struct WalBufferStats {
    std::uint64_t frames_buffered = 0;  // xWrite calls that went into a buffer
    std::uint64_t writes = 0;           // writes handed to the file below
    std::uint64_t commit_flushes = 0;   // buffers written out at a commit frame
    // Buffers written out by the barrier or a shared-memory lock with data still in them: a
    // commit frame this VFS did not recognize, or frames of a rolled-back transaction.
    std::uint64_t late_flushes = 0;
};
WalBufferStats wal_buffer_stats();

}  // namespace wsindex::storage
