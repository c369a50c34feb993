// Permission check: a directory's mode, owner and access ACL (as recorded or as the file system
// says now), and whether they grant a caller read or search, decided as the kernel decides.
//
// Classes are chosen as the kernel does: the owner class if uid matches (even if the group or
// other bits would grant more), else the group class if the directory's gid is the caller's
// primary or a supplementary group, else the other class; a directory with an extended POSIX
// ACL is judged by its ACL instead (acl(5)). Unknown metadata denies.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
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

// lstat(2) of `dir` now, with its access ACL if it has an extended one (libacl); nullopt unless
// it exists and is a directory (a symlink is not), or if its ACL cannot be read.
// A ready source for directories the index does not hold (ancestors of a scan root).
std::optional<DirPerm> live_dir_perm(const std::string& dir);

// Mode, owner and access ACL of the inode open as `fd` (any type, O_PATH included), all from that
// one inode; nullopt if fstat or the ACL read fails. For files read on a caller's behalf
// (daemon/file_hash.hpp): permits(caller, *perm, kRead) is the kernel's open(O_RDONLY) check.
std::optional<DirPerm> live_fd_perm(int fd);

}  // namespace wsindex::daemon
