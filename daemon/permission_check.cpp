// Permission check: mode bits and the kernel's ACL algorithm, and the live metadata of a
// directory (lstat, libacl), reached one component at a time when its path exceeds PATH_MAX.
#include "daemon/permission_check.hpp"

#include <acl/libacl.h>
#include <fcntl.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <memory>

namespace wsindex::daemon {

namespace {

// The kernel's POSIX ACL check (acl(5), "ACCESS CHECK ALGORITHM").
bool acl_permits(const Caller& caller, const DirPerm& perm, unsigned want) {
    unsigned mask = 7;
    for (const AclEntry& e : perm.acl) {
        if (e.tag == AclEntry::Tag::mask) mask = e.perm;
    }
    const auto grants = [want](unsigned bits) { return (bits & want) == want; };
    if (caller.uid == perm.uid) {
        for (const AclEntry& e : perm.acl) {
            if (e.tag == AclEntry::Tag::user_obj) return grants(e.perm);
        }
        return false;  // malformed: no owner entry
    }
    for (const AclEntry& e : perm.acl) {
        if (e.tag == AclEntry::Tag::user && e.id == caller.uid) return grants(e.perm & mask);
    }
    bool matched = false;
    for (const AclEntry& e : perm.acl) {
        const bool member = (e.tag == AclEntry::Tag::group_obj && caller.in_group(perm.gid)) ||
                            (e.tag == AclEntry::Tag::group && caller.in_group(e.id));
        if (!member) continue;
        if (grants(e.perm & mask)) return true;
        matched = true;
    }
    if (matched) return false;
    for (const AclEntry& e : perm.acl) {
        if (e.tag == AclEntry::Tag::other) return grants(e.perm);
    }
    return false;
}

// acl_t owner for every path out of read_access_acl.
struct AclFree {
    void operator()(void* p) const { ::acl_free(p); }
};

// The access ACL of the directory open as `fd` (O_PATH) into `out`; false if it cannot be read.
// libacl has no fd call for O_PATH descriptors; the /proc/self/fd link names the same inode
// (no path is resolved again, so a rename or a symlink swap cannot substitute another one).
bool read_access_acl(int fd, std::vector<AclEntry>* out) {
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    std::unique_ptr<void, AclFree> acl(::acl_get_file(link.c_str(), ACL_TYPE_ACCESS));
    if (!acl) return false;
    out->clear();
    acl_entry_t entry = nullptr;
    for (int rc = ::acl_get_entry(static_cast<acl_t>(acl.get()), ACL_FIRST_ENTRY, &entry); rc == 1;
         rc = ::acl_get_entry(static_cast<acl_t>(acl.get()), ACL_NEXT_ENTRY, &entry)) {
        acl_tag_t tag = ACL_UNDEFINED_TAG;
        acl_permset_t permset = nullptr;
        if (::acl_get_tag_type(entry, &tag) != 0 || ::acl_get_permset(entry, &permset) != 0) {
            return false;
        }
        AclEntry e;
        switch (tag) {
            case ACL_USER_OBJ:
                e.tag = AclEntry::Tag::user_obj;
                break;
            case ACL_USER:
                e.tag = AclEntry::Tag::user;
                break;
            case ACL_GROUP_OBJ:
                e.tag = AclEntry::Tag::group_obj;
                break;
            case ACL_GROUP:
                e.tag = AclEntry::Tag::group;
                break;
            case ACL_MASK:
                e.tag = AclEntry::Tag::mask;
                break;
            case ACL_OTHER:
                e.tag = AclEntry::Tag::other;
                break;
            default:
                return false;
        }
        if (tag == ACL_USER || tag == ACL_GROUP) {
            std::unique_ptr<void, AclFree> id(::acl_get_qualifier(entry));
            if (!id) return false;
            e.id =
                tag == ACL_USER ? *static_cast<uid_t*>(id.get()) : *static_cast<gid_t*>(id.get());
        }
        e.perm = (::acl_get_perm(permset, ACL_READ) == 1 ? kRead : 0U) |
                 (::acl_get_perm(permset, ACL_WRITE) == 1 ? kWrite : 0U) |
                 (::acl_get_perm(permset, ACL_EXECUTE) == 1 ? kSearch : 0U);
        out->push_back(e);
    }
    return true;
}

}  // namespace

bool permits(const Caller& caller, const DirPerm& perm, unsigned want) {
    if (caller.is_root()) return true;
    if (!perm.acl.empty()) return acl_permits(caller, perm, want);
    unsigned bits = 0;
    if (caller.uid == perm.uid) {
        bits = (perm.mode >> 6) & 7U;  // the owner class only, even if others get more
    } else if (caller.in_group(perm.gid)) {
        bits = (perm.mode >> 3) & 7U;
    } else {
        bits = perm.mode & 7U;
    }
    return (bits & want) == want;
}

namespace {

// An O_PATH descriptor of directory `dir`, a path longer than PATH_MAX (which the kernel refuses
// whole, ENAMETOOLONG): opened in pieces shorter than PATH_MAX, each relative to the directory
// the previous piece reached. Pieces rather than single components, so a directory costs
// length / PATH_MAX + 1 calls: one per component would make a query over a deep chain (which
// any user may create) quadratic in system calls. The last component of each piece is not
// followed if it is a symlink, and no automount is triggered there (O_PATH); components inside
// a piece resolve as they do for a short path (each ancestor is checked on its own anyway).
// -1 on any failure.
int open_long_dir(const std::string& dir) {
    int fd = AT_FDCWD;
    std::size_t pos = 0;  // the first piece starts with '/': absolute
    while (pos < dir.size()) {
        std::size_t end = dir.size();
        if (end - pos >= PATH_MAX) end = dir.rfind('/', pos + PATH_MAX - 1);
        if (end == std::string::npos || end <= pos) {  // no '/' in reach: cannot happen (NAME_MAX)
            if (fd != AT_FDCWD) ::close(fd);
            return -1;
        }
        const std::string piece = dir.substr(pos, end - pos);
        const int next = ::openat(fd, piece.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
        if (fd != AT_FDCWD) ::close(fd);
        if (next < 0) return -1;
        fd = next;
        pos = end + 1;
    }
    return fd == AT_FDCWD ? -1 : fd;
}

// Mode, owner and ACL of the directory open as `fd` (O_PATH), all from that one inode.
std::optional<DirPerm> dir_perm_of_fd(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
    DirPerm perm{static_cast<std::uint32_t>(st.st_mode), st.st_uid, st.st_gid, {}};
    // The /proc/self/fd link names the inode itself; acl_extended_file follows it to the inode
    // (the _nofollow variant would probe the link).
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const int extended = ::acl_extended_file(link.c_str());
    if (extended == 0 || (extended < 0 && (errno == ENOTSUP || errno == ENODATA))) return perm;
    if (extended < 0 || !read_access_acl(fd, &perm.acl)) return std::nullopt;
    return perm;
}

}  // namespace

std::optional<DirPerm> live_dir_perm(const std::string& dir) {
    if (dir.size() >= PATH_MAX) {
        // Too long for one system call: resolve it through directory descriptors.
        const int fd = open_long_dir(dir);
        if (fd < 0) return std::nullopt;
        std::optional<DirPerm> perm = dir_perm_of_fd(fd);
        ::close(fd);
        return perm;
    }
    struct stat st {};
    // No symlink at the last component (each ancestor is checked on its own, so a directory
    // swapped for a symlink fails its own check), and no automount triggered by a query.
    if (::fstatat(AT_FDCWD, dir.c_str(), &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) != 0 ||
        !S_ISDIR(st.st_mode)) {
        return std::nullopt;
    }
    DirPerm perm{static_cast<std::uint32_t>(st.st_mode), st.st_uid, st.st_gid, {}};
    // Most directories have no ACL: libacl's probe (lgetxattr of the access and default ACL
    // names, no path followed) says so without reading one.
    const int extended = ::acl_extended_file_nofollow(dir.c_str());
    if (extended == 0 || (extended < 0 && (errno == ENOTSUP || errno == ENODATA))) return perm;
    if (extended < 0) return std::nullopt;
    // Mode, owner and ACL from one inode: opened without following, checked to be the one
    // stat saw.
    const int fd = ::open(dir.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat again {};
    const bool same =
        ::fstat(fd, &again) == 0 && again.st_dev == st.st_dev && again.st_ino == st.st_ino;
    std::optional<DirPerm> result = same ? dir_perm_of_fd(fd) : std::nullopt;
    ::close(fd);
    return result;
}

std::optional<DirPerm> live_fd_perm(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::nullopt;
    DirPerm perm{static_cast<std::uint32_t>(st.st_mode), st.st_uid, st.st_gid, {}};
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const int extended = ::acl_extended_file(link.c_str());
    if (extended == 0 || (extended < 0 && (errno == ENOTSUP || errno == ENODATA))) return perm;
    if (extended < 0 || !read_access_acl(fd, &perm.acl)) return std::nullopt;
    return perm;
}

}  // namespace wsindex::daemon
