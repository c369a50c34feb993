// Connection admission: the per-uid cap, the shared and reserved slots, and eviction.
//
// Why more than two caps: with 256 slots and 64 per uid, four local users holding idle
// connections (a stuck monitor, a script that never closes, or someone doing it on purpose)
// fill every slot, and everyone else — root too — gets Busy until the idle timeout (5 min).
// So (docs/daemon.md, "Connection limits"):
// 1. A uid at max_connections_per_uid is refused (its own connections are in the way).
// 2. The first max_connections - reserved slots are shared; the reserved ones (a few, at most
//    half) only admit privileged callers (root and the server's own uid by default; the daemon
//    adds its control group), so root can always look and cancel.
// 3. When the slots a caller may use are taken, the longest-idle connection of the uid that
//    holds the most is closed to make room, if that uid holds more than the newcomer will
//    (so two users cannot take slots back and forth). Idle means no call running and nothing
//    left to write: the client loses no answer, just as at the idle timeout. Connections with a
//    call in progress are never closed; if every candidate is busy, the newcomer gets Busy.
#include <unistd.h>

#include <algorithm>

#include "ipc/server_core.hpp"

namespace wsindex::ipc::detail {

bool ServerCore::is_privileged(const PeerCredentials& peer) const {
    if (!peer.valid) return false;
    if (options_.privileged) return options_.privileged(peer);
    return peer.uid == 0 || peer.uid == ::geteuid();
}

std::string ServerCore::admit(const PeerCredentials& peer) {
    const auto held = per_uid_.find(peer.uid);
    const std::size_t holds = held == per_uid_.end() ? 0 : held->second;
    if (holds >= options_.max_connections_per_uid) {
        return "too many connections from uid " + std::to_string(peer.uid);
    }
    const std::size_t reserved =
        std::min(options_.reserved_connections, options_.max_connections / 2);
    const std::size_t shared = options_.max_connections - reserved;
    if (sessions_.size() < shared) return {};
    // Evaluated only under pressure: the daemon's predicate may read /proc.
    if (sessions_.size() < options_.max_connections && is_privileged(peer)) return {};
    if (evict_for(peer.uid, holds)) return {};
    return "too many connections; try again later";
}

bool ServerCore::evict_for(uid_t newcomer, std::size_t newcomer_holds) {
    std::shared_ptr<Session> victim;
    std::size_t victim_holds = 0;
    Clock::time_point victim_idle{};
    for (const auto& [id, weak] : sessions_) {
        auto session = weak.lock();
        if (!session || session->uid() == newcomer) continue;
        const std::size_t holds = per_uid_[session->uid()];
        if (holds <= newcomer_holds + 1) continue;
        const std::optional<Clock::time_point> idle = session->idle_since();
        if (!idle) continue;
        // The biggest holder first; within it, the connection idle the longest.
        if (!victim || holds > victim_holds || (holds == victim_holds && *idle < victim_idle)) {
            victim = std::move(session);
            victim_holds = holds;
            victim_idle = *idle;
        }
    }
    if (!victim) return false;
    log(LogLevel::Debug, "closing an idle connection of uid " + std::to_string(victim->uid()) +
                             " (" + std::to_string(victim_holds) + " open) to admit uid " +
                             std::to_string(newcomer));
    victim->close("closed to make room for another user");  // unregisters: a slot is free
    return true;
}

}  // namespace wsindex::ipc::detail
