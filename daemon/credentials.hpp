// Credentials: who is calling (uid, primary and supplementary groups), as the kernel will check
// their own permissions.
//
// Where the groups come from (see docs/security.md): preferably SO_PEERGROUPS on the connected
// socket (the kernel's record at connect() time, race-free); else /proc/PID/status "Groups:"
// of the SO_PEERCRED pid, checked against the SO_PEERCRED uid/gid, because that is what the
// kernel uses for the caller's own permission checks (it reflects newgrp/sg, dropped groups
// and stale logins, which getgrouplist(3) on /etc/group does not). If neither works the caller
// gets only the primary gid — fewer groups can only hide more.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
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

// The Caller behind a connection's SO_PEERCRED: groups from /proc/PID/status (see the header
// comment); if that fails (process gone, pid reused, /proc hidden), only the primary gid.
// nullopt if the credentials are invalid — such a caller sees nothing and controls nothing.
std::optional<Caller> resolve_caller(const ipc::PeerCredentials& peer);

}  // namespace wsindex::daemon
