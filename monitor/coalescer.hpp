// Coalescer: a ChangeSink that settles dirty directories before they are re-listed.
//
// A directory is due `settle` after its last change, but never later than `max_delay` after its
// first one, so a directory written to continuously is still refreshed. Root events are not
// delayed. Time comes from an injected clock so tests need no sleeps. Single-threaded: the
// caller feeds it from the backend's process_available() and drains it from the same thread.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "monitor/change_sink.hpp"

namespace wsindex::monitor {

class Coalescer final : public ChangeSink {
  public:
    using Clock = std::chrono::steady_clock;
    using TimePoint = Clock::time_point;
    using NowFn = std::function<TimePoint()>;

    struct Settings {
        std::chrono::milliseconds settle{200};
        std::chrono::milliseconds max_delay{1000};
        // When something is due, directories due within this much later leave with it: one
        // batch instead of a stream of tiny ones when changes are spread over many
        // directories (each batch re-lists and commits on its own). They settle a little less,
        // never more; a later change makes a directory dirty again.
        std::chrono::milliseconds group_within{0};
    };

    // More names than this in one directory: it is re-listed whole (one getdents pass and a
    // stat per entry beat this many single lookups in the index).
    static constexpr std::size_t kMaxNames = 256;

    explicit Coalescer(
        Settings settings, NowFn now = [] { return Clock::now(); });

    void dir_changed(const DirChange& change) override;
    void root_event(const RootEvent& event) override;

    // The directories due now, oldest first change first; they leave the coalescer.
    // `first_change` (if given and something is due): the earliest first change among them.
    [[nodiscard]] std::vector<DirChange> take_due(TimePoint* first_change = nullptr);
    // The root events received since the last call.
    [[nodiscard]] std::vector<RootEvent> take_root_events();
    // When the next directory becomes due (for a poll timeout); none when nothing is dirty.
    [[nodiscard]] std::optional<TimePoint> next_due() const;
    [[nodiscard]] std::size_t dirty_count() const { return dirty_.size(); }

  private:
    struct Dirty {
        DirChange change;
        TimePoint first;
        TimePoint last;
        std::unordered_set<std::string> names;  // of the events merged so far (kMaxNames)
        bool whole = false;                     // an event named nothing, or too many names
        bool dropped = false;                   // a name was not kept (DirChange::names_dropped)
    };
    [[nodiscard]] TimePoint due_at(const Dirty& d) const;
    // Moves every directory due at or before `limit` from the queue into `due`.
    void take_until(TimePoint limit, std::vector<Dirty>* due);

    Settings settings_;
    NowFn now_;
    std::unordered_map<std::string, Dirty> dirty_;
    // (due time when queued, identity), earliest first. A directory's due time only moves
    // later (a later change moves `last`, capped by first + max_delay), so each directory is
    // queued once and, when its entry comes up early, queued again at its current due time:
    // take_due and next_due cost O(log n) per directory instead of a pass over all of them.
    using Queued = std::pair<TimePoint, std::string>;
    std::priority_queue<Queued, std::vector<Queued>, std::greater<>> queue_;
    std::vector<RootEvent> root_events_;
};

}  // namespace wsindex::monitor
