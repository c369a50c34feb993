// Visibility: who is calling (uid, groups), who may control scans, and which indexed entries a
// caller could have seen themselves (plocate's rule, decided per directory and cached).
//
// The rule. A non-root caller sees an entry /a/b/name (its name, path, size, times, errors) only
// if they could have listed it with their own credentials: search (x) permission on every
// directory from / down to and including the parent /a/b, and read (r) permission on the
// parent /a/b. A directory's recursive totals are shown only if the caller could list that
// directory itself (x on it and every ancestor, r on it). Root (uid 0) sees everything, as
// CAP_DAC_OVERRIDE would let it. Permission bits are evaluated like the kernel does: the owner
// class if uid matches (even if the group or other bits would grant more), else the group class
// if the directory's gid is the caller's primary or a supplementary group, else the other
// class; a directory with an extended POSIX ACL is judged by its ACL instead (acl(5)).
// Unknown metadata (stat failed during the scan, directory absent, ACL unreadable) denies:
// every doubt falls on the side of hiding.
//
// Where the groups come from (see docs/security.md): preferably SO_PEERGROUPS on the connected
// socket (the kernel's record at connect() time, race-free); else /proc/PID/status "Groups:"
// of the SO_PEERCRED pid, checked against the SO_PEERCRED uid/gid, because that is what the
// kernel uses for the caller's own permission checks (it reflects newgrp/sg, dropped groups
// and stale logins, which getgrouplist(3) on /etc/group does not). If neither works the caller
// gets only the primary gid — fewer groups can only hide more.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.hpp"
#include "daemon/seams.hpp"
#include "ipc/unix_socket.hpp"

namespace wsindex::daemon {

// A caller's credentials as far as permission checks go.
struct Caller {
    uid_t uid = 0;
    gid_t gid = 0;              // primary group (SO_PEERCRED's gid: the effective gid)
    std::vector<gid_t> groups;  // supplementary groups, sorted and unique

    [[nodiscard]] bool is_root() const { return uid == 0; }
    // Primary or supplementary.
    [[nodiscard]] bool in_group(gid_t group) const;
};

// Sorts and de-duplicates `groups`.
Caller make_caller(uid_t uid, gid_t gid, std::vector<gid_t> groups);

// SO_PEERCRED + SO_PEERGROUPS of a connected AF_UNIX socket (Linux >= 4.13). Race-free: both
// are the kernel's snapshot from connect().
core::Status caller_from_socket(int fd, Caller* out);

// SO_PEERCRED values plus the supplementary groups of `pid` from /proc/PID/status. The Uid:
// and Gid: lines must contain `uid` and `gid` as the effective ids, else the pid was reused (or
// the process changed identity) and the call fails; the caller should then fall back to
// make_caller(uid, gid, {}). `proc_root` is for tests ("/proc").
core::Status caller_from_process(pid_t pid, uid_t uid, gid_t gid, Caller* out,
                                 const std::string& proc_root = "/proc");

// Parses the "Groups:" line of a /proc/PID/status text; false if the line is missing or bad.
bool parse_status_groups(std::string_view status_text, std::vector<gid_t>* out);

// getgrouplist(3) for an account: the groups the user *would* get at login. Not used for
// decisions (see the header comment); offered for tools and tests.
core::Status caller_from_account(uid_t uid, gid_t gid, Caller* out);

// May `caller` start or cancel scans or change configuration? Root, or a member (primary or
// supplementary) of the control group (`wsindex`). No control group configured: root only.
[[nodiscard]] bool may_control(const Caller& caller, std::optional<gid_t> control_group);

// The gid of a group name via getgrnam_r; nullopt if there is no such group.
std::optional<gid_t> lookup_group(const std::string& name);

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

// One query's visibility decisions for one caller. Decisions are cached per directory, so a
// result set of N entries in D directories costs at most one source lookup per distinct
// ancestor directory. Not thread-safe: make one per query (it is cheap), on the thread that
// filters that query's rows. Paths are absolute and normalized (no trailing '/', no '.',
// '..' or '//'); anything else is not visible.
class VisibilityFilter {
  public:
    VisibilityFilter(Caller caller, DirPermSource source);

    // May the caller see the entry at `path` (name and metadata)? "/" itself: yes.
    bool can_see(std::string_view path);
    // May the caller list directory `dir` (x on it and every ancestor, r on it)? Governs
    // directory totals and "under DIR" queries.
    bool can_list(std::string_view dir);
    // x on `dir` and every ancestor.
    bool can_search(std::string_view dir);

    [[nodiscard]] const Caller& caller() const { return caller_; }
    // Source lookups so far (tests check the cache with it).
    [[nodiscard]] std::size_t lookups() const { return lookups_; }

  private:
    struct DirDecision {
        bool searchable = false;  // x on this directory and every ancestor
        bool listable = false;    // searchable and r on this directory
    };
    const DirDecision& decide(const std::string& dir);

    Caller caller_;
    DirPermSource source_;
    std::unordered_map<std::string, DirDecision> cache_;  // by directory path
    std::size_t lookups_ = 0;
};

// ---- adaptors to daemon/seams.hpp ---------------------------------------------------------

// The Caller behind a connection's SO_PEERCRED: groups from /proc/PID/status (see the header
// comment); if that fails (process gone, pid reused, /proc hidden), only the primary gid.
// nullopt if the credentials are invalid — such a caller sees nothing and controls nothing.
std::optional<Caller> resolve_caller(const ipc::PeerCredentials& peer);

// Seams::visibility: one VisibilityFilter per call, over `source` (default: live_dir_perm,
// i.e. the directories' permissions now, as plocate's access() check at query time sees them).
VisibilityPolicy make_visibility_policy(DirPermSource source = live_dir_perm);

// Whether this process may read past permission bits (uid 0, or CAP_DAC_OVERRIDE or
// CAP_DAC_READ_SEARCH in its permitted set). False for a per-user daemon.
bool process_may_bypass_permissions();

// `policy`, except that a caller whose uid is `own_uid` sees everything (sees_everything, no
// listability pass). Only sound for a daemon that cannot bypass permissions
// (process_may_bypass_permissions() false): everything it indexed, it read with that uid's
// rights, so that user may read it too (main.cpp decides).
VisibilityPolicy trusting_own_user(VisibilityPolicy policy, uid_t own_uid);

// Seams::may_control: root or members of `control_group` (look it up once at startup with
// lookup_group("wsindex"); nullopt: root only).
ControlPolicy make_control_policy(std::optional<gid_t> control_group);

}  // namespace wsindex::daemon
