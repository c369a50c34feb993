// RescanLimiter: one unresolvable-change rescan per root per interval, the rest merged.
#include "daemon/rescan_limiter.hpp"

#include <spdlog/spdlog.h>

#include "ipc/bytes_codec.hpp"

namespace wsindex::daemon {

std::string common_directory(const std::string& a, const std::string& b) {
    std::size_t end = 0;  // the common prefix's length that ends at a component boundary
    for (std::size_t i = 0; i <= a.size() && i <= b.size(); ++i) {
        const bool a_end = i == a.size() || a[i] == '/';
        const bool b_end = i == b.size() || b[i] == '/';
        if (a_end && b_end) end = i;
        if (i == a.size() || i == b.size() || a[i] != b[i]) break;
    }
    return end == 0 ? std::string("/") : a.substr(0, end);
}

std::vector<monitor::RootEvent> RescanLimiter::pass(std::vector<monitor::RootEvent> events,
                                                    Clock::time_point now) {
    std::vector<monitor::RootEvent> out;
    for (monitor::RootEvent& e : events) {
        if (e.kind != monitor::RootEventKind::unresolvable) {
            out.push_back(std::move(e));
            continue;
        }
        Root& r = roots_[e.root];
        const std::string target = e.subtree.empty() ? e.root : e.subtree;
        if (r.held) {
            const std::string& held = r.held->subtree.empty() ? e.root : r.held->subtree;
            const std::string covering = common_directory(held, target);
            // Never above the root: the root's own rescan covers everything below it.
            const bool below_root =
                covering.size() > e.root.size() && covering.compare(0, e.root.size(), e.root) == 0;
            r.held->subtree = below_root ? covering : std::string();
            continue;
        }
        if (now < r.next_allowed) {
            spdlog::info(
                "live index: the rescan of {} for a change that could not be resolved waits"
                " (at most one per root every {} s)",
                ipc::log_bytes(target), every_.count());
            r.held = std::move(e);
            continue;
        }
        r.next_allowed = now + every_;
        out.push_back(std::move(e));
    }
    for (auto& [root, r] : roots_) {
        if (!r.held || now < r.next_allowed) continue;
        r.next_allowed = now + every_;
        out.push_back(std::move(*r.held));
        r.held.reset();
    }
    return out;
}

std::optional<RescanLimiter::Clock::time_point> RescanLimiter::next_due() const {
    std::optional<Clock::time_point> due;
    for (const auto& [root, r] : roots_) {
        if (r.held && (!due || r.next_allowed < *due)) due = r.next_allowed;
    }
    return due;
}

}  // namespace wsindex::daemon
