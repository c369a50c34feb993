// LiveMonitor: the monitor thread — commands, poll, backends, coalescer, delivery.
#include "daemon/live_monitor.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "core/fs_types.hpp"
#include "core/path.hpp"
#include "daemon/mount_points.hpp"
#include "daemon/rescan_limiter.hpp"
#include "ipc/bytes_codec.hpp"
#include "monitor/coalescer.hpp"
#include "monitor/fanotify_monitor.hpp"
#include "monitor/inotify_monitor.hpp"

namespace wsindex::daemon {
namespace {

using Clock = std::chrono::steady_clock;

// fanotify has no event for an unmounted file system: each root is compared with what was
// marked this often (FanotifyMonitor::check_roots).
constexpr std::chrono::seconds kCheckRoots{5};
// The window of the changes-per-second figure.
constexpr std::chrono::seconds kRateWindow{10};
// Rescans for changes that could not be resolved: at most one per root this often.
constexpr std::chrono::seconds kUnresolvableEvery{30};

std::string shown(const std::string& path) { return ipc::log_bytes(path); }

// Passes every change a backend reports on to the coalescer, and at log level trace logs it
// first: the record of which events arrived, and when, that a divergence of the live index is
// traced with (tests/cli/e2e_convergence_test.cpp's debug mode). One level check per event
// otherwise.
class TracingSink final : public monitor::ChangeSink {
  public:
    explicit TracingSink(monitor::ChangeSink& next) : next_(next) {}
    void dir_changed(const monitor::DirChange& change) override {
        if (spdlog::should_log(spdlog::level::trace)) {
            spdlog::trace("monitor: change {} name {}", describe(change), shown(change.name));
        }
        next_.dir_changed(change);
    }
    void root_event(const monitor::RootEvent& event) override {
        spdlog::trace("monitor: root event {} on {}: {}", monitor::to_string(event.kind),
                      shown(event.root), event.detail);
        next_.root_event(event);
    }

  private:
    static std::string describe(const monitor::DirChange& c) {
        if (c.inode) return "inode " + c.identity().substr(1);
        return c.key ? "key " + std::to_string(*c.key) : "dir " + shown(c.path);
    }
    monitor::ChangeSink& next_;
};

}  // namespace

struct LiveMonitor::Backends {
    explicit Backends(const Options& o)
        : coalescer({o.settle, o.max_delay, o.settle / 4}),
          tracing(coalescer),
          fan(tracing),
          ino(tracing, {}),
          rescans(kUnresolvableEvery) {}
    monitor::Coalescer coalescer;
    TracingSink tracing;
    monitor::FanotifyMonitor fan;
    monitor::InotifyMonitor ino;
    RescanLimiter rescans;  // of the root events, before they are passed on
    bool fan_open = false;
    bool fan_tried = false;
    bool ino_open = false;
    Clock::time_point next_check = Clock::now() + kCheckRoots;
    // Until then the event fds are left out of poll (see read_pace).
    Clock::time_point paced_until{};
};

namespace {

// After a read that found events, the monitor lets the next ones queue in the kernel for this
// long before it reads again. A reader blocked in poll is woken by every event the kernel
// queues, and that wake-up is charged to the writer (docs/live-index.md has the profile).
// While nobody waits, queueing an event wakes nobody, and events of one file merge in the
// queue. A tenth of the settle time, at most 20 ms, keeps the queue far from
// its limit (16384 events: 20 ms of 100k files/s at a few events each) and adds little to
// the latency the settle time already allows.
std::chrono::milliseconds read_pace(std::chrono::milliseconds settle) {
    return std::clamp(settle / 10, std::chrono::milliseconds{1}, std::chrono::milliseconds{20});
}

}  // namespace

LiveMonitor::LiveMonitor(Options options) : options_(std::move(options)), prune_(options_.prune) {}

core::Status LiveMonitor::start(Options options, std::unique_ptr<LiveMonitor>* out) {
    std::unique_ptr<LiveMonitor> m(new LiveMonitor(std::move(options)));
    m->wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!m->wake_.valid()) return core::Status::from_errno(errno, "eventfd");
    m->backends_ = std::make_unique<Backends>(m->options_);
    m->thread_ = std::thread([p = m.get()] { p->main(); });
    *out = std::move(m);
    return {};
}

LiveMonitor::~LiveMonitor() { stop(); }

void LiveMonitor::stop() {
    stopping_.store(true);
    if (wake_.valid()) {
        const std::uint64_t one = 1;
        (void)!::write(wake_.get(), &one, sizeof one);
    }
    if (thread_.joinable()) thread_.join();
}

void LiveMonitor::watch(const std::string& root) {
    {
        std::lock_guard lock(mutex_);
        commands_.emplace_back(true, root);
    }
    const std::uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof one);
}

void LiveMonitor::unwatch(const std::string& root) {
    {
        std::lock_guard lock(mutex_);
        commands_.emplace_back(false, root);
    }
    const std::uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof one);
}

std::vector<LiveRootStatus> LiveMonitor::status() const {
    std::vector<LiveRootStatus> out;
    const Clock::time_point now = Clock::now();
    std::lock_guard lock(mutex_);
    for (const Root& r : roots_) {
        if (!r.active) continue;
        LiveRootStatus s = r.status;
        std::uint64_t recent = 0;
        for (const auto& [at, n] : r.rate) {
            if (now - at <= kRateWindow) recent += n;
        }
        s.changes_per_second =
            static_cast<double>(recent) / static_cast<double>(kRateWindow.count());
        out.push_back(std::move(s));
    }
    return out;
}

std::size_t LiveMonitor::root_of(const std::string& path) const {
    // The deepest active root holding `path`.
    std::size_t best = std::string::npos;
    for (std::size_t i = 0; i < roots_.size(); ++i) {
        if (!roots_[i].active || !core::at_or_below(path, roots_[i].status.root)) continue;
        if (best == std::string::npos ||
            roots_[i].status.root.size() > roots_[best].status.root.size()) {
            best = i;
        }
    }
    return best;
}

void LiveMonitor::add_root(const std::string& root) {
    {
        std::lock_guard lock(mutex_);
        for (Root& r : roots_) {
            if (r.status.root == root) {
                r.active = true;
                return;
            }
        }
        for (const Root& r : roots_) {
            if (r.active && core::at_or_below(root, r.status.root)) return;  // covered
        }
    }
    Backends& b = *backends_;
    std::string mode;
    if (options_.backend != WatchBackend::Inotify) {
        if (!b.fan_tried) {
            b.fan_tried = true;
            if (auto st = b.fan.open(); st) {
                b.fan_open = true;
            } else {
                spdlog::log(options_.backend == WatchBackend::Fanotify ? spdlog::level::err
                                                                       : spdlog::level::info,
                            "live index: fanotify unavailable ({}); using inotify", st.to_string());
            }
        }
        if (b.fan_open) {
            if (auto st = b.fan.add_root(root); st) {
                mode = "fanotify";
                mark_mounts_below(root);
            } else {
                spdlog::warn(
                    "live index: fanotify cannot mark the file system of {} ({}); using"
                    " inotify",
                    shown(root), st.to_string());
            }
        }
    }
    if (mode.empty()) {
        if (!b.ino_open) {
            if (auto st = b.ino.open(); !st) {
                spdlog::error(
                    "live index: inotify unavailable ({}); {} is kept current by"
                    " periodic rescans only",
                    st.to_string(), shown(root));
                mode = "periodic";
            } else {
                b.ino_open = true;
            }
        }
        if (mode.empty()) {
            if (auto st = b.ino.add_root(root); !st) {
                spdlog::error("live index: cannot watch {} ({}); periodic rescans only",
                              shown(root), st.to_string());
                mode = "periodic";
            } else {
                mode = "inotify";
            }
        }
    }
    spdlog::info("live index: following {} ({})", shown(root), mode);
    std::lock_guard lock(mutex_);
    Root r;
    r.status.root = root;
    r.status.mode = mode;
    if (mode == "inotify") r.status.watches = b.ino.watch_count();
    roots_.push_back(std::move(r));
}

// A fanotify mark covers one file system: each file system mounted below the root that its
// walk enters needs its own (pruned types and one_file_system roots excepted).
void LiveMonitor::mark_mounts_below(const std::string& root) {
    if (options_.one_file_system && options_.one_file_system(root)) return;
    for (const std::string& mount : mount_points_below(root)) {
        if (!first_pruned(mount, root).empty()) continue;
        if (prune_.has_fs_rules()) {
            struct statfs fs {};
            if (::statfs(mount.c_str(), &fs) != 0) continue;
            if (prune_.prune_fs(core::fs_type_name(static_cast<std::uint64_t>(fs.f_type)))) {
                continue;
            }
        }
        if (auto st = backends_->fan.add_root(mount); !st) {
            spdlog::info(
                "live index: the file system mounted at {} cannot be marked ({}); its"
                " changes are found by rescans",
                shown(mount), st.to_string());
        }
    }
}

std::string LiveMonitor::first_pruned(const std::string& path, const std::string& root) const {
    if (!prune_.has_dir_rules()) return {};
    // Each directory strictly below the root on the way to `path`, `path` itself included:
    // the walk records a pruned directory but does not list it.
    std::size_t end = root == "/" ? 0 : root.size();
    while (end < path.size()) {
        const std::size_t next = path.find('/', end + 1);
        std::string dir = path.substr(0, next);
        const std::string_view name = std::string_view(dir).substr(end + 1);
        if (!name.empty() && prune_.prune_dir(dir, name)) return dir;
        if (next == std::string::npos) break;
        end = next;
    }
    return {};
}

void LiveMonitor::run_commands() {
    std::vector<std::pair<bool, std::string>> commands;
    {
        std::lock_guard lock(mutex_);
        commands.swap(commands_);
    }
    for (auto& [add, root] : commands) {
        if (add) {
            add_root(root);
            continue;
        }
        std::lock_guard lock(mutex_);
        for (Root& r : roots_) {
            if (r.status.root == root && r.active) {
                r.active = false;
                spdlog::info("live index: no longer following {}", shown(root));
            }
        }
    }
}

void LiveMonitor::deliver(Clock::time_point now) {
    Backends& b = *backends_;
    const std::vector<monitor::RootEvent> events =
        b.rescans.pass(b.coalescer.take_root_events(), now);
    for (const monitor::RootEvent& e : events) {
        {
            std::lock_guard lock(mutex_);
            for (Root& r : roots_) {
                if (r.status.root != e.root) continue;
                if (e.kind == monitor::RootEventKind::overflow ||
                    e.kind == monitor::RootEventKind::unresolvable) {
                    ++r.status.overflows;
                } else if (e.kind == monitor::RootEventKind::needs_periodic) {
                    r.status.mode = "periodic";
                }
            }
        }
        if (options_.on_root_event) options_.on_root_event(e);
    }
    LiveChanges changes;
    changes.oldest = now;
    std::vector<monitor::DirChange> due = b.coalescer.take_due(&changes.oldest);
    if (due.empty()) return;
    {
        std::lock_guard lock(mutex_);
        std::vector<std::uint64_t> per_root(roots_.size(), 0);
        for (monitor::DirChange& c : due) {
            if (c.inode) {
                changes.inodes.push_back(*c.inode);
                continue;
            }
            if (c.path.empty()) continue;  // registered keys are not used by the daemon
            const std::size_t root = root_of(c.path);
            if (root == std::string::npos) continue;
            const std::string pruned = first_pruned(c.path, roots_[root].status.root);
            if (!pruned.empty()) {
                // Inside a pruned directory nothing is indexed; only a change of its own
                // listing moves its mtime, which its row in its parent holds.
                if (pruned != c.path) continue;
                const std::size_t slash = c.path.rfind('/');
                c.names = {c.path.substr(slash + 1)};
                c.rewalk.clear();
                c.names_dropped = false;
                c.path.resize(slash == 0 ? 1 : slash);
            }
            ++per_root[root];
            changes.dirs.push_back(ChangedDir{std::move(c.path), std::move(c.names),
                                              std::move(c.rewalk), c.names_dropped});
        }
        for (std::size_t i = 0; i < roots_.size(); ++i) {
            if (per_root[i] == 0) continue;
            Root& r = roots_[i];
            r.status.changes += per_root[i];
            r.rate.emplace_back(now, per_root[i]);
            while (!r.rate.empty() && now - r.rate.front().first > kRateWindow) {
                r.rate.erase(r.rate.begin());
            }
        }
    }
    // The lag the scan thread reports runs from the first change of the oldest directory.
    if ((!changes.dirs.empty() || !changes.inodes.empty()) && options_.on_changes) {
        options_.on_changes(std::move(changes));
    }
}

void LiveMonitor::main() {
    Backends& b = *backends_;
    while (!stopping_.load()) {
        pollfd fds[3];
        nfds_t n = 0;
        fds[n++] = {wake_.get(), POLLIN, 0};
        const bool paced = Clock::now() < b.paced_until;
        const int fan_slot = b.fan_open && !paced ? static_cast<int>(n) : -1;
        if (fan_slot >= 0) fds[n++] = {b.fan.fd(), POLLIN, 0};
        const int ino_slot = b.ino_open && !paced ? static_cast<int>(n) : -1;
        if (ino_slot >= 0) fds[n++] = {b.ino.fd(), POLLIN, 0};
        Clock::time_point wake_at = b.next_check;
        if (const auto due = b.coalescer.next_due()) wake_at = std::min(wake_at, *due);
        if (paced) wake_at = std::min(wake_at, b.paced_until);
        if (const auto held = b.rescans.next_due()) wake_at = std::min(wake_at, *held);
        const auto wait =
            std::chrono::duration_cast<std::chrono::milliseconds>(wake_at - Clock::now());
        const int timeout = static_cast<int>(std::max<std::int64_t>(0, wait.count() + 1));
        const int rc = ::poll(fds, n, timeout);
        if (rc < 0 && errno != EINTR) {
            spdlog::error("live index: poll failed: {}", std::strerror(errno));
            return;
        }
        if (rc > 0 && (fds[0].revents & POLLIN) != 0) {
            std::uint64_t count = 0;
            (void)!::read(wake_.get(), &count, sizeof count);
            if (stopping_.load()) break;
            run_commands();
        }
        const std::uint64_t events_before = b.fan.stats().events + b.ino.stats().events;
        bool drained = true;
        if (fan_slot >= 0 && rc > 0 && (fds[fan_slot].revents & POLLIN) != 0) {
            const core::Status st = b.fan.process_available();
            drained = drained && b.fan.drained();
            if (!st) {
                spdlog::error("live index: reading fanotify events failed: {}", st.to_string());
                std::lock_guard lock(mutex_);
                for (const Root& r : roots_) {
                    b.coalescer.root_event({monitor::RootEventKind::overflow, r.status.root,
                                            "the fanotify group failed"});
                }
            }
        }
        if (ino_slot >= 0 && rc > 0 && (fds[ino_slot].revents & POLLIN) != 0) {
            const core::Status st = b.ino.process_available();
            drained = drained && b.ino.drained();
            if (!st) {
                spdlog::error("live index: reading inotify events failed: {}", st.to_string());
            }
            std::lock_guard lock(mutex_);
            for (Root& r : roots_) {
                if (r.status.mode == "inotify") r.status.watches = b.ino.watch_count();
            }
        }
        const Clock::time_point now = Clock::now();
        // Paced only when the queues were read empty: under a flood the reader keeps reading,
        // or the kernel's queue (16384 events by default) would overflow.
        if (drained && b.fan.stats().events + b.ino.stats().events != events_before) {
            b.paced_until = now + read_pace(options_.settle);
        }
        if (now >= b.next_check) {
            if (b.fan_open) b.fan.check_roots();
            b.next_check = now + kCheckRoots;
        }
        deliver(now);
    }
}

}  // namespace wsindex::daemon
