// LiveMonitor: the daemon's change monitor — one thread that polls the fanotify group (or the
// inotify fallback), settles changes in the coalescer, and hands due directories and root events
// to the scan service, which re-lists and applies them (scan_service_live.cpp).
//
// Choices:
// - One thread, poll(2) on the backends' fds and an eventfd for commands: the backends have no
//   thread of their own (monitor/), and nothing here may block the io thread.
// - fanotify first (one mark per file system, no per-directory cost); inotify when fanotify is
//   not allowed (not root, no CAP_SYS_ADMIN) or the file system refuses a mark (no file
//   handles), or when the configuration asks for it.
// - Directories are reported by path (fanotify's slow path resolves each handle with
//   open_by_handle_at + readlink, so a renamed directory is always found where it is now).
// - Statistics per root: how it is kept current, the changes reported, the overflows.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/prune.hpp"
#include "core/status.hpp"
#include "core/unique_fd.hpp"
#include "daemon/changed_dir.hpp"
#include "daemon/config.hpp"
#include "monitor/change_sink.hpp"

namespace wsindex::daemon {

// Directories whose listing changed, settled, for the scan thread.
struct LiveChanges {
    std::vector<ChangedDir> dirs;
    // Hard-linked files changed through a name outside every root (monitor::DirChange::inode):
    // their indexed names are to be re-stat'ed.
    std::vector<monitor::InodeId> inodes;
    std::chrono::steady_clock::time_point oldest;  // the first change among them
};

// How one root is kept current (the Status reply's `live`).
struct LiveRootStatus {
    std::string root;
    std::string mode;               // "fanotify", "inotify", "periodic" (watch budget exhausted)
    std::uint64_t watches = 0;      // inotify watches of this root
    std::uint64_t changes = 0;      // dirty directories reported
    std::uint64_t overflows = 0;    // changes lost (queue overflow, unresolvable events)
    double changes_per_second = 0;  // over the last few seconds
};

class LiveMonitor {
  public:
    struct Options {
        WatchBackend backend = WatchBackend::Auto;
        std::chrono::milliseconds settle{200};
        std::chrono::milliseconds max_delay{1000};
        // What the walk skips: changes there are dropped before they reach the scan thread, and
        // the file systems of mount points it does not enter are not marked.
        core::PruneRules prune;
        // Whether the walk of `root` stays on its file system (its mount points then need no
        // mark). Monitor thread.
        std::function<bool(const std::string& root)> one_file_system;
        // Monitor thread; must not block.
        std::function<void(LiveChanges)> on_changes;
        std::function<void(const monitor::RootEvent&)> on_root_event;
    };

    static core::Status start(Options options, std::unique_ptr<LiveMonitor>* out);
    LiveMonitor(const LiveMonitor&) = delete;
    LiveMonitor& operator=(const LiveMonitor&) = delete;
    ~LiveMonitor();  // stop()

    // Any thread. Starts following `root` (absolute, resolved); a root at or below one already
    // followed is covered by it. Takes effect on the monitor thread, soon.
    void watch(const std::string& root);
    // Any thread. Stops reporting changes under `root` (forgotten roots).
    void unwatch(const std::string& root);
    // Any thread.
    [[nodiscard]] std::vector<LiveRootStatus> status() const;
    void stop();

  private:
    explicit LiveMonitor(Options options);
    class Sink;
    void main();
    void run_commands();
    void add_root(const std::string& root);
    void deliver(std::chrono::steady_clock::time_point now);
    [[nodiscard]] std::size_t root_of(const std::string& path) const;  // npos: none
    // The first directory below `root` on the way to `path` (or `path` itself) that the walk
    // prunes, or empty: the walk records it but lists nothing below it.
    [[nodiscard]] std::string first_pruned(const std::string& path, const std::string& root) const;
    void mark_mounts_below(const std::string& root);

    Options options_;
    core::PruneMatcher prune_;  // options_.prune, prepared
    core::UniqueFd wake_;       // eventfd: commands or stop
    std::thread thread_;
    std::atomic<bool> stopping_{false};

    mutable std::mutex mutex_;
    std::vector<std::pair<bool, std::string>> commands_;  // guarded: (watch?, root)
    struct Root {
        LiveRootStatus status;
        bool active = true;
        std::vector<std::pair<std::chrono::steady_clock::time_point, std::uint64_t>> rate;
    };
    std::vector<Root> roots_;  // guarded (written by the monitor thread)

    // Monitor thread only.
    struct Backends;
    std::unique_ptr<Backends> backends_;
};

}  // namespace wsindex::daemon
