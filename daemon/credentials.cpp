// Credentials: SO_PEERCRED/SO_PEERGROUPS, /proc/PID/status groups, getgrouplist.
#include "daemon/credentials.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <sstream>

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
std::optional<Caller> resolve_caller(const ipc::PeerCredentials& peer) {
    if (!peer.valid) return std::nullopt;
    Caller caller;
    if (caller_from_process(peer.pid, peer.uid, peer.gid, &caller)) return caller;
    return make_caller(peer.uid, peer.gid, {});
}
}  // namespace wsindex::daemon
