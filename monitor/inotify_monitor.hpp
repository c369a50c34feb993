// InotifyMonitor: the fallback where fanotify cannot mark a file system (not root, or no file
// handles): one inotify watch per directory, up to a budget, reported by path on a ChangeSink.
//
// Like FanotifyMonitor it has no thread: poll fd() and call process_available(). New
// subdirectories get watches as they appear; a directory moved within the roots keeps its
// watches under the new path, one moved out loses them. A root that does not fit in the watch
// budget is reported once as needs_periodic (the client rescans it now and then); the watches
// already placed keep working. inotify sees nothing of other mounts of the same file system or
// of changes made through hard links elsewhere.
#pragma once

#include <sys/inotify.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/status.hpp"
#include "core/unique_fd.hpp"
#include "monitor/change_sink.hpp"

namespace wsindex::monitor {

class InotifyMonitor {
  public:
    struct Options {
        // Watches this monitor may place; 0: half of /proc/sys/fs/inotify/max_user_watches.
        std::size_t max_watches = 0;
    };
    struct Stats {
        std::uint64_t events = 0;
        std::uint64_t overflows = 0;
    };

    InotifyMonitor(ChangeSink& sink, Options options);

    [[nodiscard]] core::Status open();
    // Watches `root` and every directory below it (symlinks are not followed).
    [[nodiscard]] core::Status add_root(const std::string& root);

    [[nodiscard]] int fd() const { return fd_.get(); }
    // Reads what is queued (a bounded amount) and reports it; an error is the monitor's failure.
    [[nodiscard]] core::Status process_available();
    // The last process_available() read the queue empty (else more is waiting).
    [[nodiscard]] bool drained() const { return drained_; }

    [[nodiscard]] std::size_t watch_count() const { return watches_.size(); }
    [[nodiscard]] std::size_t max_watches() const { return max_watches_; }
    [[nodiscard]] const Stats& stats() const { return stats_; }

  private:
    struct Watch {
        std::string path;
        std::size_t root = 0;
    };
    struct Root {
        std::string path;
        int wd = -1;
        bool over_budget = false;
        bool gone = false;
    };

    // Adds watches to `dir` and its subdirectories; updates paths of watches already there.
    void watch_tree(const std::string& dir, std::size_t root);
    // Watches the directory open at `dirfd`, known as `dir`.
    bool add_watch(int dirfd, const std::string& dir, std::size_t root);
    void handle_event(const struct inotify_event& ev);
    void root_gone(std::size_t root, RootEventKind kind, const std::string& detail);

    ChangeSink& sink_;
    core::UniqueFd fd_;
    std::size_t max_watches_;
    std::vector<Root> roots_;
    std::unordered_map<int, Watch> watches_;
    // Directories moved from a watched directory in this batch, by cookie, until their
    // IN_MOVED_TO arrives; left over at the end of a batch, they moved out of the roots. Each
    // holds the watches of the moved subtree when it left: those are removed, not the watches
    // that its old path has by then (another directory may have been moved there since, or the
    // same one moved back in with another cookie).
    struct MovedFrom {
        std::string path;
        std::vector<int> wds;
    };
    std::unordered_map<std::uint32_t, MovedFrom> moved_from_;
    // Watches added or confirmed (inotify_add_watch) in this process_available() call.
    std::unordered_set<int> added_this_pass_;
    Stats stats_;
    bool drained_ = true;
};

}  // namespace wsindex::monitor
