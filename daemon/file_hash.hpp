// File hash: opening one indexed regular file safely on a caller's behalf and hashing it
// (XXH3-128), for `wsctl dupes` (daemon/dupes_finder.hpp).
//
// Opening. The file's directory is reached with a DirChain (daemon/permission_check.hpp): from
// "/" one component at a time, no symlink followed in any component, each directory judged for
// the caller on the descriptor that is then used (r and x on every ancestor, the visibility
// rule), so a symlink swapped into the path between the caller's visibility check and the read
// makes the open fail instead of reading another directory's file. The file is opened relative
// to that directory's descriptor, O_PATH|O_NOFOLLOW (no symlink at the last component, and
// nothing opened that has side effects on open: devices, FIFOs), checked with fstat to be a
// regular file with the indexed dev, inode, size, mtime and ctime, checked against the caller's
// read permission on that very inode (mode and access ACL), and only then reopened for reading
// through /proc/self/fd of that descriptor (the same inode; O_RDONLY|O_NOATIME where the daemon
// owns or may, O_CLOEXEC). A symlink, another object or a directory that is gone means the file
// changed: Changed, not hashed. After the read the inode is fstat'ed again: a file that changed
// meanwhile is reported Changed, and its hash is not used. Pages the read brought into the page
// cache are dropped again (POSIX_FADV_DONTNEED) unless the file was cached before (its first
// page, probed with a RWF_NOWAIT read): hashing a tree must not evict what the machine is
// working with, nor drop what it had cached.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "daemon/permission_check.hpp"
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

    // Each call reaches the file's directory with `dirs` (the calling worker's own chain, whose
    // judge is the caller's directory check); `path` is absolute.

    // First and last kPartialBytes (or the whole file when small), as XXH3-128.
    HashOutcome partial(DirChain& dirs, const std::string& path, const IndexedInode& expect,
                        storage::Hash128* out, ReadCounters* counters);
    // The whole content, as XXH3-128.
    HashOutcome full(DirChain& dirs, const std::string& path, const IndexedInode& expect,
                     storage::Hash128* out, ReadCounters* counters);
    // Without reading content: may the caller read this file, and is it still as indexed?
    HashOutcome check(DirChain& dirs, std::string_view path, const IndexedInode& expect);
    // Byte comparison of two files of the same indexed size: *equal when their contents are.
    HashOutcome same_content(DirChain& dirs, const std::string& a_path, const IndexedInode& a,
                             const std::string& b_path, const IndexedInode& b, bool* equal,
                             ReadCounters* counters);

  private:
    ReadPermission may_read_;
    std::function<bool()> stop_;
};

}  // namespace wsindex::daemon
