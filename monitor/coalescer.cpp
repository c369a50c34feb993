// Coalescer: dirty directories become due after a settle time, bounded by a maximum delay.
#include "monitor/coalescer.hpp"

#include <algorithm>
#include <utility>

namespace wsindex::monitor {

Coalescer::Coalescer(Settings settings, NowFn now) : settings_(settings), now_(std::move(now)) {}

void Coalescer::dir_changed(const DirChange& change) {
    const TimePoint t = now_();
    auto [it, inserted] = dirty_.try_emplace(change.identity(), Dirty{change, t, t});
    Dirty& d = it->second;
    if (inserted) queue_.emplace(due_at(d), it->first);
    if (!inserted) {
        d.last = t;
        // A later report may know more (a path where the first had only the key).
        if (d.change.path.empty()) d.change.path = change.path;
    }
    // Names are kept after the directory became whole, up to kMaxNames, for DirChange::rewalk.
    if (change.name.empty() || (!d.whole && d.names.size() >= kMaxNames)) d.whole = true;
    if (!change.name.empty()) {
        if (d.names.size() < kMaxNames) {
            d.names.insert(change.name);
        } else if (!d.names.contains(change.name)) {
            d.dropped = true;
        }
    }
}

void Coalescer::root_event(const RootEvent& event) { root_events_.push_back(event); }

Coalescer::TimePoint Coalescer::due_at(const Dirty& d) const {
    return std::min(d.last + settings_.settle, d.first + settings_.max_delay);
}

void Coalescer::take_until(TimePoint limit, std::vector<Dirty>* due) {
    while (!queue_.empty() && queue_.top().first <= limit) {
        std::string identity = queue_.top().second;
        queue_.pop();
        const auto it = dirty_.find(identity);
        if (it == dirty_.end()) continue;
        const TimePoint at = due_at(it->second);
        if (at > limit) {
            queue_.emplace(at, std::move(identity));  // changed since it was queued: later
            continue;
        }
        due->push_back(std::move(it->second));
        dirty_.erase(it);
    }
}

std::vector<DirChange> Coalescer::take_due(TimePoint* first_change) {
    const TimePoint t = now_();
    std::vector<Dirty> due;
    take_until(t, &due);
    if (!due.empty() && settings_.group_within.count() > 0) {
        take_until(t + settings_.group_within, &due);
    }
    std::sort(due.begin(), due.end(),
              [](const Dirty& a, const Dirty& b) { return a.first < b.first; });
    if (first_change != nullptr && !due.empty()) *first_change = due.front().first;
    std::vector<DirChange> out;
    out.reserve(due.size());
    for (auto& d : due) {
        DirChange c = std::move(d.change);
        c.name.clear();
        c.names.clear();
        std::vector<std::string>& names = d.whole ? c.rewalk : c.names;
        names.assign(d.names.begin(), d.names.end());
        std::sort(names.begin(), names.end());
        c.names_dropped = d.dropped;
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<RootEvent> Coalescer::take_root_events() { return std::exchange(root_events_, {}); }

std::optional<Coalescer::TimePoint> Coalescer::next_due() const {
    // The earliest queued time: never later than the true next due time (entries only move
    // later), so a caller that sleeps until it wakes no later than needed.
    if (queue_.empty()) return std::nullopt;
    return queue_.top().first;
}

}  // namespace wsindex::monitor
