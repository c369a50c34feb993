// Coalescer: dirty directories become due after a settle time, bounded by a maximum delay.
#include "monitor/coalescer.hpp"

#include <algorithm>
#include <utility>

namespace wsindex::monitor {

Coalescer::Coalescer(Settings settings, NowFn now) : settings_(settings), now_(std::move(now)) {}

void Coalescer::dir_changed(const DirChange& change) {
    const TimePoint t = now_();
    auto [it, inserted] = dirty_.try_emplace(change.identity(), Dirty{change, t, t});
    if (!inserted) {
        it->second.last = t;
        // A later report may know more (a path where the first had only the key).
        if (it->second.change.path.empty()) it->second.change.path = change.path;
    }
}

void Coalescer::root_event(const RootEvent& event) { root_events_.push_back(event); }

Coalescer::TimePoint Coalescer::due_at(const Dirty& d) const {
    return std::min(d.last + settings_.settle, d.first + settings_.max_delay);
}

std::vector<DirChange> Coalescer::take_due(TimePoint* first_change) {
    const TimePoint t = now_();
    std::vector<Dirty> due;
    for (auto it = dirty_.begin(); it != dirty_.end();) {
        if (due_at(it->second) <= t) {
            due.push_back(std::move(it->second));
            it = dirty_.erase(it);
        } else {
            ++it;
        }
    }
    std::sort(due.begin(), due.end(),
              [](const Dirty& a, const Dirty& b) { return a.first < b.first; });
    if (first_change != nullptr && !due.empty()) *first_change = due.front().first;
    std::vector<DirChange> out;
    out.reserve(due.size());
    for (auto& d : due) out.push_back(std::move(d.change));
    return out;
}

std::vector<RootEvent> Coalescer::take_root_events() { return std::exchange(root_events_, {}); }

std::optional<Coalescer::TimePoint> Coalescer::next_due() const {
    std::optional<TimePoint> next;
    for (const auto& [id, d] : dirty_) {
        const TimePoint t = due_at(d);
        if (!next || t < *next) next = t;
    }
    return next;
}

}  // namespace wsindex::monitor
