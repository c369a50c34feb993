// Seams: the hooks through which the daemon calls modules written elsewhere (visibility, systemd).
//
// The per-caller visibility filter (daemon/visibility.*) and the systemd glue (daemon/systemd_*)
// are written in parallel with the daemon. Until they land, the daemon calls them through these
// std::function hooks, whose defaults allow everything and notify nobody; main.cpp is the one
// place that plugs the real implementations in.
#pragma once

#include <functional>
#include <string_view>

#include "ipc/unix_socket.hpp"

namespace wsindex::daemon {

// Answers "may this caller learn that `path` exists (its name, size, times)?" for one call.
// Made per call on the thread that runs the query, and used only there, so an implementation
// may cache per-directory decisions without locks.
using PathFilter = std::function<bool(std::string_view path)>;

// What one caller may see, for one call (same thread rules as PathFilter).
struct CallerView {
    PathFilter can_see;   // the entry's name and metadata
    PathFilter can_list;  // a directory's entries (governs its totals: docs/security.md)
    // True for root: every answer may use the precomputed totals without any lookup.
    bool sees_everything = false;
};

// Makes the CallerView of one caller. Any thread.
using VisibilityPolicy = std::function<CallerView(const ipc::PeerCredentials& peer)>;

// May this caller start or cancel scans? Any thread; must not block.
using ControlPolicy = std::function<bool(const ipc::PeerCredentials& peer)>;

// The service manager (systemd Type=notify and socket activation). Every hook may be empty.
struct ServiceManagerHooks {
    // The database is open and the socket listens.
    std::function<void()> notify_ready;
    // One line of human status ("scan 12 running"); readable by every user, so no paths.
    std::function<void(std::string_view)> notify_status;
    std::function<void()> notify_reloading;
    std::function<void()> notify_stopping;
    // An inherited listening socket (socket activation), or -1 to bind our own.
    std::function<int()> listen_fd;
};

struct Seams {
    VisibilityPolicy visibility;  // empty: everyone sees everything
    ControlPolicy may_control;    // empty: everyone may scan and cancel
    ServiceManagerHooks service_manager;
};

// The defaults until the visibility module lands.
inline CallerView make_caller_view(const Seams& seams, const ipc::PeerCredentials& peer) {
    if (seams.visibility) return seams.visibility(peer);
    const PathFilter all = [](std::string_view) { return true; };
    return CallerView{all, all, true};
}
inline PathFilter make_path_filter(const Seams& seams, const ipc::PeerCredentials& peer) {
    return make_caller_view(seams, peer).can_see;
}
inline bool may_control(const Seams& seams, const ipc::PeerCredentials& peer) {
    return !seams.may_control || seams.may_control(peer);
}

}  // namespace wsindex::daemon
