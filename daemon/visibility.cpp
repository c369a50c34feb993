// Visibility: credential gathering, the control check, and the cached per-directory filter.
#include "daemon/visibility.hpp"

#include <acl/libacl.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/acl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "ipc/path_text.hpp"

namespace wsindex::daemon {

namespace {

core::Status invalid(std::string message) {
    return {std::make_error_code(std::errc::invalid_argument), std::move(message)};
}

// The value part of "Key:\t..." in a /proc status text, or nullopt.
std::optional<std::string_view> status_field(std::string_view text, std::string_view key) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        if (line.size() > key.size() && line.substr(0, key.size()) == key &&
            line[key.size()] == ':') {
            return line.substr(key.size() + 1);
        }
        pos = end + 1;
    }
    return std::nullopt;
}

// Whitespace-separated decimal ids; false on anything else.
bool parse_ids(std::string_view text, std::vector<std::uint32_t>* out) {
    out->clear();
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] == ' ' || text[i] == '\t') {
            ++i;
            continue;
        }
        std::uint32_t value = 0;
        auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value);
        if (ec != std::errc() || ptr == text.data() + i) return false;
        out->push_back(value);
        i = static_cast<std::size_t>(ptr - text.data());
        if (i < text.size() && text[i] != ' ' && text[i] != '\t') return false;
    }
    return true;
}

}  // namespace

bool Caller::in_group(gid_t group) const {
    return group == gid || std::binary_search(groups.begin(), groups.end(), group);
}

Caller make_caller(uid_t uid, gid_t gid, std::vector<gid_t> groups) {
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    return Caller{uid, gid, std::move(groups)};
}

core::Status caller_from_socket(int fd, Caller* out) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        return core::Status::from_errno(errno, "SO_PEERCRED");
    }
    // NGROUPS_MAX is 65536; start small (most users have a handful) and grow once on ERANGE,
    // which reports the size needed in `len`.
    std::vector<gid_t> groups(32);
    len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) != 0) {
        if (errno != ERANGE) return core::Status::from_errno(errno, "SO_PEERGROUPS");
        groups.resize(len / sizeof(gid_t) + 1);
        len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
        if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) != 0) {
            return core::Status::from_errno(errno, "SO_PEERGROUPS");
        }
    }
    groups.resize(len / sizeof(gid_t));
    *out = make_caller(cred.uid, cred.gid, std::move(groups));
    return {};
}

bool parse_status_groups(std::string_view status_text, std::vector<gid_t>* out) {
    auto field = status_field(status_text, "Groups");
    if (!field) return false;
    std::vector<std::uint32_t> ids;
    if (!parse_ids(*field, &ids)) return false;
    out->assign(ids.begin(), ids.end());
    return true;
}

core::Status caller_from_process(pid_t pid, uid_t uid, gid_t gid, Caller* out,
                                 const std::string& proc_root) {
    if (pid <= 0) return invalid("no peer pid");
    const std::string path = proc_root + "/" + std::to_string(pid) + "/status";
    std::ifstream in(path);
    if (!in) return core::Status::from_errno(errno == 0 ? ENOENT : errno, path);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();

    // Uid:/Gid: are "real effective saved fs"; SO_PEERCRED reports the effective ids. A
    // mismatch means the pid now belongs to someone else (reuse) or the process changed
    // identity since connect(): its groups would describe the wrong caller.
    std::vector<std::uint32_t> uids, gids;
    auto uid_line = status_field(text, "Uid");
    auto gid_line = status_field(text, "Gid");
    if (!uid_line || !gid_line || !parse_ids(*uid_line, &uids) || !parse_ids(*gid_line, &gids) ||
        uids.size() < 2 || gids.size() < 2) {
        return invalid(path + ": no Uid:/Gid: lines");
    }
    if (uids[1] != uid || gids[1] != gid) {
        return invalid(path + ": effective uid/gid differ from the peer credentials");
    }
    std::vector<gid_t> groups;
    if (!parse_status_groups(text, &groups)) return invalid(path + ": no Groups: line");
    *out = make_caller(uid, gid, std::move(groups));
    return {};
}

core::Status caller_from_account(uid_t uid, gid_t gid, Caller* out) {
    std::vector<char> buffer(16 * 1024);
    passwd pw{};
    passwd* found = nullptr;
    int rc = 0;
    while ((rc = ::getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found)) == ERANGE) {
        buffer.resize(buffer.size() * 2);
    }
    if (rc != 0) return core::Status::from_errno(rc, "getpwuid_r");
    if (found == nullptr) {
        *out = make_caller(uid, gid, {});  // no account: only the primary group
        return {};
    }
    int count = 64;
    std::vector<gid_t> groups(static_cast<std::size_t>(count));
    while (::getgrouplist(pw.pw_name, gid, groups.data(), &count) < 0) {
        groups.resize(static_cast<std::size_t>(count) + 1);  // count now holds the size needed
        count = static_cast<int>(groups.size());
    }
    groups.resize(static_cast<std::size_t>(count));
    *out = make_caller(uid, gid, std::move(groups));
    return {};
}

bool may_control(const Caller& caller, std::optional<gid_t> control_group) {
    if (caller.is_root()) return true;
    return control_group.has_value() && caller.in_group(*control_group);
}

std::optional<gid_t> lookup_group(const std::string& name) {
    std::vector<char> buffer(16 * 1024);
    group gr{};
    group* found = nullptr;
    int rc = 0;
    while ((rc = ::getgrnam_r(name.c_str(), &gr, buffer.data(), buffer.size(), &found)) == ERANGE) {
        buffer.resize(buffer.size() * 2);
    }
    if (rc != 0 || found == nullptr) return std::nullopt;
    return gr.gr_gid;
}

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

std::optional<DirPerm> live_dir_perm(const std::string& dir) {
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
    const bool ok = same && read_access_acl(fd, &perm.acl);
    ::close(fd);
    if (!ok) return std::nullopt;
    perm.mode = static_cast<std::uint32_t>(again.st_mode);
    perm.uid = again.st_uid;
    perm.gid = again.st_gid;
    return perm;
}

std::optional<Caller> resolve_caller(const ipc::PeerCredentials& peer) {
    if (!peer.valid) return std::nullopt;
    Caller caller;
    if (caller_from_process(peer.pid, peer.uid, peer.gid, &caller)) return caller;
    return make_caller(peer.uid, peer.gid, {});
}

VisibilityPolicy make_visibility_policy(DirPermSource source) {
    return [source = std::move(source)](const ipc::PeerCredentials& peer) -> CallerView {
        std::optional<Caller> caller = resolve_caller(peer);
        if (!caller) {
            const PathFilter none = [](std::string_view) { return false; };
            return CallerView{none, none, false};
        }
        const bool root = caller->is_root();
        // PathFilter must be copyable (std::function); the filter and its cache are shared by
        // the copies, which all live on the one thread that runs this call's query.
        auto filter = std::make_shared<VisibilityFilter>(std::move(*caller), source);
        return CallerView{[filter](std::string_view path) { return filter->can_see(path); },
                          [filter](std::string_view dir) { return filter->can_list(dir); }, root};
    };
}

bool process_may_bypass_permissions() {
    if (::geteuid() == 0) return true;
    // capget(2) directly: glibc has no wrapper, and libcap would be a dependency for one call.
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
    if (::syscall(SYS_capget, &header, data) != 0) return true;  // unknown: assume it may
    constexpr std::uint32_t kBypass = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
    return (data[0].permitted & kBypass) != 0;
}

VisibilityPolicy trusting_own_user(VisibilityPolicy policy, uid_t own_uid) {
    return [policy = std::move(policy), own_uid](const ipc::PeerCredentials& peer) {
        if (!peer.valid || peer.uid != own_uid) return policy(peer);
        CallerView everything;
        everything.can_see = [](std::string_view) { return true; };
        everything.can_list = [](std::string_view) { return true; };
        everything.sees_everything = true;
        return everything;
    };
}

ControlPolicy make_control_policy(std::optional<gid_t> control_group) {
    return [control_group](const ipc::PeerCredentials& peer) {
        std::optional<Caller> caller = resolve_caller(peer);
        return caller.has_value() && may_control(*caller, control_group);
    };
}

VisibilityFilter::VisibilityFilter(Caller caller, DirPermSource source)
    : caller_(std::move(caller)), source_(std::move(source)) {}

const VisibilityFilter::DirDecision& VisibilityFilter::decide(const std::string& dir) {
    if (auto it = cache_.find(dir); it != cache_.end()) return it->second;
    // Walk up to the nearest decided ancestor (or past "/"), then decide downwards, so each
    // directory costs one lookup however many entries share it.
    std::vector<std::string> chain{dir};
    const DirDecision* above = nullptr;
    for (std::string cur = dir;;) {
        auto parent = ipc::parent_path(cur);
        if (!parent) break;
        std::string up(*parent);
        if (auto it = cache_.find(up); it != cache_.end()) {
            above = &it->second;  // unordered_map nodes stay put when later inserts rehash
            break;
        }
        chain.push_back(up);
        cur = std::move(up);
    }
    bool searchable_above = above == nullptr || above->searchable;  // "/" has no parent
    const DirDecision* result = nullptr;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        DirDecision decision;
        if (searchable_above) {
            ++lookups_;
            if (auto perm = source_(*it)) {
                decision.searchable = permits(caller_, *perm, kSearch);
                decision.listable = decision.searchable && permits(caller_, *perm, kRead);
            }
        }
        // No lookup below an unsearchable directory: everything there is hidden anyway.
        searchable_above = decision.searchable;
        result = &cache_.emplace(*it, decision).first->second;
    }
    return *result;
}

bool VisibilityFilter::can_search(std::string_view dir) {
    if (!ipc::is_normalized_absolute(dir)) return false;
    if (caller_.is_root()) return true;
    return decide(std::string(dir)).searchable;
}

bool VisibilityFilter::can_list(std::string_view dir) {
    if (!ipc::is_normalized_absolute(dir)) return false;
    if (caller_.is_root()) return true;
    return decide(std::string(dir)).listable;
}

bool VisibilityFilter::can_see(std::string_view path) {
    if (!ipc::is_normalized_absolute(path)) return false;
    auto parent = ipc::parent_path(path);
    if (!parent) return true;  // "/" itself
    if (caller_.is_root()) return true;
    return decide(std::string(*parent)).listable;
}

}  // namespace wsindex::daemon
