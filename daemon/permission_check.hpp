// Permission check: a directory's mode, owner and access ACL (as recorded or as the file system
// says now), and whether they grant a caller read or search, decided as the kernel decides.
//
// Classes are chosen as the kernel does: the owner class if uid matches (even if the group or
// other bits would grant more), else the group class if the directory's gid is the caller's
// primary or a supplementary group, else the other class; a directory with an extended POSIX
// ACL is judged by its ACL instead (acl(5)). Unknown metadata denies.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daemon/credentials.hpp"

namespace wsindex::daemon {

// One entry of a POSIX access ACL (acl(5)).
struct AclEntry {
    enum class Tag { user_obj, user, group_obj, group, mask, other };
    Tag tag = Tag::other;
    std::uint32_t id = 0;  // uid for user, gid for group; unused otherwise
    unsigned perm = 0;     // kRead | kWrite | kSearch bits
};

// Mode, owner and group of one directory, as recorded in the index or as lstat sees it now,
// and its access ACL when it has an extended one.
struct DirPerm {
    std::uint32_t mode = 0;  // st_mode (only the 0777 bits are used)
    uid_t uid = 0;
    gid_t gid = 0;
    // Empty: no extended ACL, the mode bits decide. Otherwise every entry of the access ACL
    // (user_obj, group_obj and other included), and the kernel's ACL algorithm decides.
    std::vector<AclEntry> acl;
};

inline constexpr unsigned kRead = 4;
inline constexpr unsigned kWrite = 2;
inline constexpr unsigned kSearch = 1;

// Does `perm` grant `caller` all of `want` (kRead | kSearch ...)? Kernel class selection, or
// with an ACL the kernel's ACL check (owner entry; else a named-user entry, masked; else every
// owning-group and named-group entry the caller is in, masked — any one granting suffices,
// matching but not granting denies; else other). Root always yes.
[[nodiscard]] bool permits(const Caller& caller, const DirPerm& perm, unsigned want);

// Looks up one directory by absolute normalized path ("/", "/a", "/a/b"); nullopt if unknown.
using DirPermSource = std::function<std::optional<DirPerm>(const std::string& dir)>;

// Mode, owner and access ACL of `dir` now (libacl for an extended ACL), reached one component at
// a time from "/" as DirChain does (no symlink followed in any component); nullopt unless it
// exists and is a directory, or if its ACL cannot be read. One call judges one directory: a
// caller that judges a directory and its ancestors uses one DirChain for all of them.
std::optional<DirPerm> live_dir_perm(const std::string& dir);

// Judges one directory of a chain by its mode, owner and ACL. Empty: every directory passes.
using DirJudge = std::function<bool(const DirPerm& perm)>;

// Directories reached from "/" one component at a time, each with openat(O_NOFOLLOW |
// O_DIRECTORY; for reading, or O_PATH where this process may not read it) relative to the
// descriptor of the one above, fstat'ed, and its ACL asked on that descriptor, so that what is
// judged (or read) for /a/b is the directory actually reached below the /a judged just before: a
// user who swaps a symlink into the path makes the open fail (ELOOP) instead of redirecting it, and
// the permissions judged are those of the objects then read through (docs/security.md,
// "Resolution by descriptor"). The descriptors of the last directory's ancestors are kept, so a
// run of directories that share a prefix (rows in path order) opens only what differs. A path
// reached again is checked to be the object reached there before (a judgment or a cached
// decision about it still holds). Not thread-safe: one per thread.
class DirChain {
  public:
    explicit DirChain(DirJudge judge = {});
    ~DirChain();
    DirChain(DirChain&& other) noexcept;
    DirChain& operator=(DirChain&&) = delete;
    DirChain(const DirChain&) = delete;
    DirChain& operator=(const DirChain&) = delete;

    // A descriptor of the directory `dir` (absolute, normalized; any length; open for reading
    // or O_PATH: use it as a directory to look names up in, nothing else), owned by
    // the chain and valid until the next call; or -errno: -ELOOP a component is a symlink,
    // -ENOTDIR not a directory, -EACCES the judge refused a component (or its ACL could not be
    // read), -ESTALE a component is another object than this chain reached at that path
    // before, -EINVAL a bad path; else the errno of the open that failed. Every component newly
    // opened ("/" included) is judged; the ones kept from the call before were judged then.
    int open(std::string_view dir);
    // Mode, owner and access ACL of `dir` reached as open() reaches it; nullopt where open()
    // fails or the ACL cannot be read.
    std::optional<DirPerm> perm(std::string_view dir);

    // Called with each component's path after it was opened and judged, before the next one
    // is opened (tests put a rename exactly there). Empty: nothing.
    std::function<void(std::string_view path)> after_component;

  private:
    struct Level {
        std::size_t end = 0;  // this level's path is path_.substr(0, end); "/" is 0
        int fd = -1;          // -1: closed to bound the descriptors held (reopened on demand)
    };
    int admit(std::string_view path, int fd, bool readable);
    int reopen(std::size_t level);
    void trim_open_levels();
    void reset();

    DirJudge judge_;
    std::string path_;           // of the deepest level
    std::vector<Level> levels_;  // "/" first
    // Identity of every path this chain reached (by a hash of the path: a collision can only
    // deny).
    std::unordered_map<std::size_t, std::pair<std::uint64_t, std::uint64_t>> seen_;
    // The stat of the component admit() accepted last, for perm() of the directory open()
    // reached when that is the one (it was just opened): no second statx.
    struct stat last_stat_ {};
    bool last_readable_ = false;
    int last_fd_ = -1;
};

// Mode, owner and access ACL of the inode open as `fd` (any type, O_PATH included), all from that
// one inode; nullopt if fstat or the ACL read fails. For files read on a caller's behalf
// (daemon/file_hash.hpp): permits(caller, *perm, kRead) is the kernel's open(O_RDONLY) check.
std::optional<DirPerm> live_fd_perm(int fd);

}  // namespace wsindex::daemon
