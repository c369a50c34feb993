// File hash: opening one indexed regular file safely on a caller's behalf and hashing it
// (XXH3-128), for `wsctl dupes` (daemon/dupes_finder.hpp).
//
// Opening. The path is opened O_PATH|O_NOFOLLOW (no symlink followed at the last component, and
// nothing opened that has side effects on open: devices, FIFOs), checked with fstat to be a
// regular file with the indexed dev, inode, size, mtime and ctime, checked against the caller's
// read permission on that very inode (mode and access ACL), and only then reopened for reading
// through /proc/self/fd (O_RDONLY|O_NOATIME where the daemon owns or may, O_CLOEXEC). After the
// read the inode is fstat'ed again: a file that changed meanwhile is reported Changed, and its
// hash is not used. Pages the read brought into the page cache are dropped again
// (POSIX_FADV_DONTNEED) unless the file was cached before (its first page, probed with a
// RWF_NOWAIT read): hashing a tree must not evict what the machine is working with, nor drop
// what it had cached.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "storage/content_hashes.hpp"

namespace wsindex::daemon {

// What the index says about the inode; the file must still match it.
struct IndexedInode {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
};

enum class HashOutcome {
    Hashed,      // *out holds the hash
    Changed,     // not a regular file, or another inode, size or time than indexed (now or after)
    Unreadable,  // the caller may not read it, or it is gone, or open/read failed
    Cancelled,   // stop() said so mid-read
};

// Bytes hashed at each end of a file for its partial hash. A file of at most 2 * kPartialBytes
// is hashed whole, and its partial hash is its full hash.
inline constexpr std::int64_t kPartialBytes = 4096;

// Decides whether the caller may read the inode open as `fd` (O_PATH). Empty: anyone may.
using ReadPermission = std::function<bool(int fd)>;

struct ReadCounters {
    std::uint64_t bytes = 0;  // content bytes read
    std::uint64_t files = 0;  // files whose content was read
};

class FileHasher {
  public:
    explicit FileHasher(ReadPermission may_read, std::function<bool()> stop = {})
        : may_read_(std::move(may_read)), stop_(std::move(stop)) {}

    // First and last kPartialBytes (or the whole file when small), as XXH3-128.
    HashOutcome partial(const std::string& path, const IndexedInode& expect, storage::Hash128* out,
                        ReadCounters* counters);
    // The whole content, as XXH3-128.
    HashOutcome full(const std::string& path, const IndexedInode& expect, storage::Hash128* out,
                     ReadCounters* counters);
    // Without reading content: may the caller read this file, and is it still as indexed?
    HashOutcome check(const std::string& path, const IndexedInode& expect);
    // The same for `name` in the directory open as `dir_fd` (O_PATH is enough): a whole path
    // is looked up once per directory instead of once per file.
    HashOutcome check_at(int dir_fd, const char* name, const IndexedInode& expect);
    // Byte comparison of two files of the same indexed size: *equal when their contents are.
    HashOutcome same_content(const std::string& a_path, const IndexedInode& a,
                             const std::string& b_path, const IndexedInode& b, bool* equal,
                             ReadCounters* counters);

  private:
    ReadPermission may_read_;
    std::function<bool()> stop_;
};

}  // namespace wsindex::daemon
