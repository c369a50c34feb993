// Clean close: a small mark next to the index file, written when the daemon closed it cleanly,
// so that the next start can skip `PRAGMA quick_check` of a file nothing has touched since.
//
// Why: quick_check reads every page of the file on one thread; on a 100M-entry index (9 GB) a
// start took 2-4.5 minutes before the socket answered (10-22 s at 10M). A file that was closed
// cleanly (every connection closed, the log checkpointed and deleted) and is still the same file
// with the same size and modification time was not damaged by a crash of ours or by a write of
// anyone else's. What the mark cannot see — bits that rot on the disk without a write — is met
// by the first query or scan that reads the page, reported, and checked then (report_damage).
//
// The mark (`<db>.clean`) holds the file's device, inode, size and modification time (set to
// random nanoseconds when the mark is written, so that any later write changes it). It is
// taken (read and removed) at every start, before the file is opened for writing, so a daemon
// that then crashes leaves none behind.
#pragma once

#include <string>

#include "core/status.hpp"

namespace wsindex::storage {

// Call once no connection to `db_path` is open. Writes the mark (a temporary file, renamed) if
// the file exists and has no write-ahead log left (else a connection was still open, or the last
// one could not checkpoint: not clean).
core::Status mark_closed_cleanly(const std::string& db_path);

// Removes the mark and says whether it described `db_path` as it is now (same device, inode,
// size and modification time, and no write-ahead log). Any doubt (no mark, unreadable, another
// file): false.
bool take_clean_close_mark(const std::string& db_path);

}  // namespace wsindex::storage
