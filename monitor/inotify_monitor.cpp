// InotifyMonitor: watches per directory, events to dirty paths, moves, budget and overflow.
#include "monitor/inotify_monitor.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/path.hpp"
#include "core/resolve.hpp"
#include "core/unique_fd.hpp"

namespace wsindex::monitor {
namespace {

constexpr std::uint32_t kMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |
                                IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF |
                                IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK;
constexpr int kMaxReadsPerCall = 16;
// Left out of kMask for a watch placed through a descriptor's /proc/self/fd link, which must be
// followed (the descriptor itself was opened without following any symlink).
constexpr std::uint32_t kFollowFlags = IN_DONT_FOLLOW;

std::size_t default_budget() {
    std::ifstream in("/proc/sys/fs/inotify/max_user_watches");
    std::size_t limit = 8192;  // the kernel's historical default
    in >> limit;
    return limit / 2;
}

}  // namespace

InotifyMonitor::InotifyMonitor(ChangeSink& sink, Options options)
    : sink_(sink), max_watches_(options.max_watches ? options.max_watches : default_budget()) {}

core::Status InotifyMonitor::open() {
    fd_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!fd_.valid()) return core::Status::from_errno(errno, "inotify_init1");
    return {};
}

core::Status InotifyMonitor::add_root(const std::string& root) {
    if (!fd_.valid()) return core::Status::from_errno(EBADF, "inotify not open");
    // By descriptor, as every directory below it (watch_tree).
    const core::UniqueFd dir(core::open_dir_absolute(root, O_PATH));
    if (!dir.valid()) return core::Status::from_errno(-dir.get(), "open " + root);
    const std::string link = "/proc/self/fd/" + std::to_string(dir.get());
    const int wd = ::inotify_add_watch(fd_.get(), link.c_str(), kMask & ~kFollowFlags);
    if (wd < 0) return core::Status::from_errno(errno, "inotify_add_watch " + root);
    const std::size_t index = roots_.size();
    roots_.push_back(Root{root, wd, false, false});
    watches_[wd] = Watch{root, index};
    watch_tree(root, index);
    return {};
}

bool InotifyMonitor::add_watch(int dirfd, const std::string& dir, std::size_t root) {
    const auto over_budget = [&](const std::string& why) {
        if (!roots_[root].over_budget) {
            roots_[root].over_budget = true;
            sink_.root_event({RootEventKind::needs_periodic, roots_[root].path, why});
        }
        return false;
    };
    if (watches_.size() >= max_watches_) {
        return over_budget("inotify watch budget of " + std::to_string(max_watches_) + " reached");
    }
    // Through the descriptor's magic link (which must be followed: IN_DONT_FOLLOW is left out):
    // the directory opened without a symlink on its path, and at any depth.
    const std::string link = "/proc/self/fd/" + std::to_string(dirfd);
    const int wd = ::inotify_add_watch(fd_.get(), link.c_str(), kMask & ~kFollowFlags);
    if (wd < 0) {
        // The user's max_user_watches is spent (shared with every other inotify user).
        if (errno == ENOSPC) return over_budget("inotify: max_user_watches reached");
        return true;  // gone or unreadable: its parent's listing says so
    }
    watches_[wd] = Watch{dir, root};  // a known wd (a moved directory) gets its new path
    added_this_pass_.insert(wd);
    return true;
}

void InotifyMonitor::watch_tree(const std::string& top, std::size_t root) {
    std::vector<std::string> stack{top};
    while (!stack.empty()) {
        const std::string dir = std::move(stack.back());
        stack.pop_back();
        // By descriptor, never through a symlink, in pieces past PATH_MAX (core/resolve.hpp):
        // a deep directory is watched like any other.
        const int fd = core::open_dir_absolute(dir, O_RDONLY);
        if (fd < 0) continue;  // gone or unreadable: its parent's listing says so
        DIR* d = ::fdopendir(fd);
        if (d == nullptr) {
            ::close(fd);
            continue;
        }
        if (dir != top || top != roots_[root].path) {
            if (!add_watch(fd, dir, root)) {
                ::closedir(d);
                return;
            }
        }
        while (const dirent* e = ::readdir(d)) {
            if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
            // Opening refuses anything but a directory when d_type is unknown.
            if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) {
                stack.push_back(dir + "/" + e->d_name);
            }
        }
        ::closedir(d);
    }
}

core::Status InotifyMonitor::process_available() {
    alignas(struct inotify_event) static thread_local char buf[64 * 1024];
    drained_ = false;
    added_this_pass_.clear();
    for (int i = 0; i < kMaxReadsPerCall; ++i) {
        const ssize_t n = ::read(fd_.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN) return core::Status::from_errno(errno, "read inotify");
            drained_ = true;
            break;
        }
        for (ssize_t off = 0; off < n;) {
            const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
            ++stats_.events;
            handle_event(*ev);
            off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
        }
    }
    // A directory moved from a watched directory with no IN_MOVED_TO in what was read: it left
    // the roots (or its IN_MOVED_TO is in the next read; then watch_tree puts it back). Its
    // watches go, unless a move into the roots read since placed them again.
    for (const auto& [cookie, moved] : moved_from_) {
        for (const int wd : moved.wds) {
            if (added_this_pass_.contains(wd) || watches_.erase(wd) == 0) continue;
            ::inotify_rm_watch(fd_.get(), wd);
        }
    }
    moved_from_.clear();
    return {};
}

void InotifyMonitor::handle_event(const struct inotify_event& ev) {
    if (ev.mask & IN_Q_OVERFLOW) {
        ++stats_.overflows;
        for (const auto& r : roots_) {
            if (!r.gone) sink_.root_event({RootEventKind::overflow, r.path, "inotify overflow"});
        }
        return;
    }
    const auto it = watches_.find(ev.wd);
    if (it == watches_.end()) return;  // a watch removed since
    const Watch w = it->second;
    Root& root = roots_[w.root];
    const bool is_root = ev.wd == root.wd;
    if (ev.mask & IN_IGNORED) {
        watches_.erase(ev.wd);
        if (is_root) root_gone(w.root, RootEventKind::mark_lost, "inotify watch removed");
        return;
    }
    if (ev.mask & IN_UNMOUNT) {
        root_gone(w.root, RootEventKind::mark_lost, "file system unmounted");
        return;
    }
    if (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
        // Any other directory's removal or move is reported in its parent.
        if (is_root) {
            const bool deleted = (ev.mask & IN_DELETE_SELF) != 0;
            root_gone(w.root, deleted ? RootEventKind::root_deleted : RootEventKind::root_moved,
                      deleted ? "root deleted" : "root moved");
        }
        return;
    }
    // No name: the directory is re-listed whole. inotify (on directories) never sees a link
    // count change (a write or unlink through a hard link elsewhere changes this file's size,
    // nlink and ctime with no event here), so only a whole re-listing keeps such names right.
    sink_.dir_changed(DirChange{std::nullopt, w.path});
    if (ev.len == 0 || !(ev.mask & IN_ISDIR)) return;
    // A directory named too: the whole re-listing walks it again in full (DirChange::rewalk),
    // since it may be one that left the roots and came back with other contents.
    sink_.dir_changed(DirChange{std::nullopt, w.path, ev.name, {}});
    const std::string child = w.path + "/" + ev.name;
    if (ev.mask & IN_MOVED_FROM) {
        MovedFrom moved{child, {}};
        for (const auto& [wd, watch] : watches_) {
            if (watch.path != child && !core::strictly_below(watch.path, child)) continue;
            moved.wds.push_back(wd);
            added_this_pass_.erase(wd);  // only a placement after the move keeps it
        }
        moved_from_[ev.cookie] = std::move(moved);
    } else if (ev.mask & (IN_CREATE | IN_MOVED_TO)) {
        if (ev.mask & IN_MOVED_TO) moved_from_.erase(ev.cookie);
        watch_tree(child, w.root);
    }
}

void InotifyMonitor::root_gone(std::size_t root, RootEventKind kind, const std::string& detail) {
    Root& r = roots_[root];
    if (r.gone) return;
    r.gone = true;
    sink_.root_event({kind, r.path, detail});
}

}  // namespace wsindex::monitor
