// Permission check: mode bits and the kernel's ACL algorithm, and the live metadata of
// directories (fstat, libacl) reached by descriptor, one component at a time from "/".
#include "daemon/permission_check.hpp"

#include <acl/libacl.h>
#include <fcntl.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
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

constexpr int kDirFlags = O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC;

// Descriptors a chain keeps open below "/": the deepest levels, where consecutive rows differ.
// A level above them is reopened (and checked to be the same object) when a path needs it.
constexpr std::size_t kMaxOpenLevels = 64;

// The size of an access ACL xattr with only the three base entries (a header of 4 bytes, 8 per
// entry): no more than the mode says (libacl's acl_extended_file counts the same way).
constexpr ssize_t kBaseAclBytes = 4 + 3 * 8;

// Whether the inode open as `fd` has an extended access ACL: 1, 0, or -1 (cannot tell). Asked
// with fgetxattr when `fd` is open for reading; an O_PATH descriptor has no xattr calls, so
// then through its /proc/self/fd link, which names the inode itself too (no path is resolved
// again, so a rename or a symlink swap cannot substitute another one) but costs a lookup in
// /proc. A default ACL governs new files, not access: only the access ACL is asked for.
int access_acl_state(int fd, bool readable) {
    ssize_t n = -1;
    if (readable) {
        n = ::fgetxattr(fd, "system.posix_acl_access", nullptr, 0);
    } else {
        const std::string link = "/proc/self/fd/" + std::to_string(fd);
        n = ::getxattr(link.c_str(), "system.posix_acl_access", nullptr, 0);
    }
    if (n > kBaseAclBytes) return 1;
    if (n >= 0 || errno == ENODATA || errno == ENOTSUP) return 0;
    return -1;
}

// Mode, owner and ACL of the inode open as `fd`, `st` its fstat: all from that one inode (the
// ACL itself is read through the /proc/self/fd link).
std::optional<DirPerm> perm_of(int fd, const struct stat& st, bool readable) {
    DirPerm perm{static_cast<std::uint32_t>(st.st_mode), st.st_uid, st.st_gid, {}};
    const int acl = access_acl_state(fd, readable);
    if (acl == 0) return perm;
    if (acl < 0 || !read_access_acl(fd, &perm.acl)) return std::nullopt;
    return perm;
}

// One component below `dirfd`, never following a symlink: for reading (its ACL is then asked
// without /proc), or O_PATH where this process may not read it (a per-user daemon). O_DIRECTORY
// triggers an automount either way, as the path walk below it would. Sets *readable.
int open_component(int dirfd, const char* name, bool* readable) {
    int fd = ::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    *readable = fd >= 0;
    if (fd < 0 && errno == EACCES) fd = ::openat(dirfd, name, kDirFlags);
    return fd;
}

std::size_t path_key(std::string_view path) { return std::hash<std::string_view>{}(path); }

}  // namespace

DirChain::DirChain(DirJudge judge) : judge_(std::move(judge)) {}

DirChain::~DirChain() { reset(); }

DirChain::DirChain(DirChain&& other) noexcept
    : after_component(std::move(other.after_component)),
      judge_(std::move(other.judge_)),
      path_(std::move(other.path_)),
      levels_(std::move(other.levels_)),
      seen_(std::move(other.seen_)) {
    other.levels_.clear();
}

void DirChain::reset() {
    for (const Level& l : levels_) {
        if (l.fd >= 0) ::close(l.fd);
    }
    levels_.clear();
    path_.clear();
}

// The component just opened as `fd`, at `path` ("" for "/"): a directory, the object this chain
// reached at that path before (if it did), and granted by the judge.
int DirChain::admit(std::string_view path, int fd, bool readable) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return -errno;
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    const std::pair<std::uint64_t, std::uint64_t> id{st.st_dev, st.st_ino};
    const auto [it, fresh] = seen_.try_emplace(path_key(path), id);
    if (!fresh && it->second != id) return -ESTALE;
    last_stat_ = st;
    last_readable_ = readable;
    last_fd_ = fd;
    if (judge_) {
        const std::optional<DirPerm> perm = perm_of(fd, st, readable);
        if (!perm || !judge_(*perm)) return -EACCES;
    }
    if (after_component) after_component(path.empty() ? std::string_view("/") : path);
    return 0;
}

// Opens again level `level`, whose descriptor was closed, from the nearest open level above it
// (there is one: "/" stays open), each component checked as when it was first reached.
int DirChain::reopen(std::size_t level) {
    std::size_t j = level;
    while (levels_[j].fd < 0) --j;
    int cur = levels_[j].fd;
    for (std::size_t i = j + 1; i <= level; ++i) {
        const std::size_t from = levels_[i - 1].end + 1;
        const std::string name = path_.substr(from, levels_[i].end - from);
        bool readable = false;
        const int fd = open_component(cur, name.c_str(), &readable);
        const int err = errno;
        if (i - 1 > j) ::close(cur);
        if (fd < 0) return -err;
        if (const int rc = admit(std::string_view(path_).substr(0, levels_[i].end), fd, readable);
            rc != 0) {
            ::close(fd);
            return rc;
        }
        cur = fd;
    }
    levels_[level].fd = cur;
    return 0;
}

// Closes the descriptor of the level that just left the window of kept ones.
void DirChain::trim_open_levels() {
    if (levels_.size() <= kMaxOpenLevels + 1) return;
    Level& l = levels_[levels_.size() - kMaxOpenLevels - 1];
    if (l.fd >= 0) {
        ::close(l.fd);
        l.fd = -1;
    }
}

int DirChain::open(std::string_view dir) {
    last_fd_ = -1;  // only a component admitted by this call is last_stat_'s
    if (dir.empty() || dir.front() != '/') return -EINVAL;
    while (!dir.empty() && dir.back() == '/') dir.remove_suffix(1);  // "/" is ""
    if (levels_.empty()) {
        bool readable = false;
        const int fd = open_component(AT_FDCWD, "/", &readable);
        if (fd < 0) return -errno;
        if (const int rc = admit("", fd, readable); rc != 0) {
            ::close(fd);
            return rc;
        }
        path_.clear();
        levels_.push_back({0, fd});
    }
    // Keep the levels that are ancestors of `dir` (or `dir` itself).
    std::size_t common = 0;
    const std::size_t n = std::min(dir.size(), path_.size());
    while (common < n && dir[common] == path_[common]) ++common;
    while (levels_.size() > 1) {
        const std::size_t end = levels_.back().end;
        if (end <= common && (end == dir.size() || dir[end] == '/')) break;
        if (levels_.back().fd >= 0) ::close(levels_.back().fd);
        levels_.pop_back();
    }
    path_.resize(levels_.back().end);
    if (levels_.back().fd < 0) {
        if (const int rc = reopen(levels_.size() - 1); rc != 0) {
            reset();
            return rc;
        }
    }
    // The rest, one component at a time below the level reached.
    std::size_t pos = levels_.back().end;
    while (pos < dir.size()) {
        const std::size_t start = pos + 1;  // dir[pos] is '/'
        std::size_t end = dir.find('/', start);
        if (end == std::string_view::npos) end = dir.size();
        const std::string name(dir.substr(start, end - start));
        if (name.empty() || name == "." || name == "..") return -EINVAL;
        bool readable = false;
        const int fd = open_component(levels_.back().fd, name.c_str(), &readable);
        if (fd < 0) return -errno;
        path_.append(dir.substr(pos, end - pos));
        if (const int rc = admit(path_, fd, readable); rc != 0) {
            ::close(fd);
            path_.resize(levels_.back().end);
            return rc;
        }
        levels_.push_back({end, fd});
        trim_open_levels();
        pos = end;
    }
    return levels_.back().fd;
}

std::optional<DirPerm> DirChain::perm(std::string_view dir) {
    const int fd = open(dir);
    if (fd < 0) return std::nullopt;
    if (fd == last_fd_) return perm_of(fd, last_stat_, last_readable_);
    // A level kept from an earlier call: asked through /proc, as an O_PATH one would be.
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
    return perm_of(fd, st, false);
}

std::optional<DirPerm> live_dir_perm(const std::string& dir) {
    DirChain chain;
    return chain.perm(dir);
}

std::optional<DirPerm> live_fd_perm(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::nullopt;
    return perm_of(fd, st, false);
}

}  // namespace wsindex::daemon
