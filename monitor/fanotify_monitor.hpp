// FanotifyMonitor: one fanotify group with a file-system mark per watched root's file system;
// turns events into dirty directories and root events on a ChangeSink.
//
// No thread of its own: the caller polls fd() for POLLIN and calls process_available(), which
// reads a bounded number of buffers and returns (the fd stays readable if more is queued).
// Directories are identified by their file handle. The client registers the handles of the
// directories it knows (register_dir), so an event maps to a key with one hash lookup. An unknown
// handle takes the slow path: open_by_handle_at on the root's file system, readlink of
// /proc/self/fd/N, and a check that the path lies under a watched root (events outside the roots
// are dropped there). Needs CAP_SYS_ADMIN (file-system marks) and CAP_DAC_READ_SEARCH
// (open_by_handle_at); Linux 5.9 (FAN_REPORT_DFID_NAME), FAN_RENAME used from 5.17.
#pragma once

#include <sys/fanotify.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/status.hpp"
#include "core/unique_fd.hpp"
#include "monitor/change_sink.hpp"
#include "monitor/handle_key.hpp"

namespace wsindex::monitor {

class FanotifyMonitor {
  public:
    struct Stats {
        std::uint64_t events = 0;          // event records read
        std::uint64_t overflows = 0;       // FAN_Q_OVERFLOW seen
        std::uint64_t slow_path = 0;       // unknown handles resolved to a path
        std::uint64_t outside_roots = 0;   // dropped: the directory is under no root
        std::uint64_t stale_handles = 0;   // dropped: the directory no longer exists
        std::uint64_t unresolvable = 0;    // reported: the directory could not be identified
        std::uint64_t linked_outside = 0;  // hard-linked files changed through a name outside
        std::uint64_t deep_paths = 0;      // paths the kernel could not print, found by descriptors
    };

    explicit FanotifyMonitor(ChangeSink& sink) : sink_(sink) {}

    // Creates the group (FAN_REPORT_TARGET_FID where the kernel has it). EPERM without
    // CAP_SYS_ADMIN, EINVAL on kernels before 5.9.
    [[nodiscard]] core::Status open();

    // Marks the file system holding `root` (once per file system) and remembers the root.
    // `root` should be an absolute path without symlinks: resolved paths are compared with it.
    [[nodiscard]] core::Status add_root(const std::string& root);

    // Records the handle of the directory open at `dirfd` as `key`.
    [[nodiscard]] core::Status register_dir(int dirfd, DirKey key);
    [[nodiscard]] core::Status register_path(const std::string& path, DirKey key);
    void clear_dirs() { handles_.clear(); }

    // The fd to poll for POLLIN.
    [[nodiscard]] int fd() const { return fan_.get(); }
    // Reads what is queued (at most a bounded amount) and reports it to the sink. An error here
    // is the monitor's failure: the caller should rescan every root and stop using it.
    [[nodiscard]] core::Status process_available();
    // The last process_available() read the queue empty (else it stopped at its bound and more
    // is waiting).
    [[nodiscard]] bool drained() const { return drained_; }

    // Checks every root still is the directory that was marked (same device and inode); reports
    // mark_lost for one that is not (unmounted, or replaced). fanotify has no event for that, so
    // the caller runs this now and then.
    void check_roots();

    [[nodiscard]] bool has_rename() const { return has_rename_; }
    [[nodiscard]] const Stats& stats() const { return stats_; }

  private:
    struct Root {
        std::string path;
        HandleKey handle;  // the root directory's own handle: self events
        std::string fsid;  // raw fsid bytes: which roots an event can concern
        dev_t dev = 0;
        ino_t ino = 0;
        bool gone = false;  // deleted, moved or lost: reported once
    };

    // `records` to `end`: the event's info records, in the read buffer.
    void handle_event(const struct fanotify_event_metadata& meta, const char* records,
                      const char* end);
    // Reports the change of `name` in the directory of handle `fh`; false when that directory
    // lies outside every root (the change is dropped).
    bool dirty_dir(const HandleKey& key, const void* fh, std::string_view name);
    // An event that named only the object itself (no directory and name): a link count change
    // (link or unlink of another name) changes a file's ctime and nlink without an event in its
    // directory. Resolved to a path, it becomes a named change of that path's directory.
    void changed_object(const HandleKey& key, const void* fh);
    // A file changed through a name outside every root (its event named only that name): if it
    // has other names, some may be indexed, and their metadata changed too. Reported as an
    // inode change (DirChange::inode) for the daemon to find those names in its index. Each
    // object is looked at once per process_available() call.
    void changed_outside(const HandleKey& key, const void* fh);
    // Reports the file open at `fd` as an inode change (DirChange::inode) if it has several
    // names; `outside`: the name its event came through lies outside every root (counted).
    void report_if_linked(int fd, bool outside);
    // A root on the file system `fsid`, opened to resolve handles through (-1 when none can
    // be opened); `watched`: some root is on that file system at all.
    [[nodiscard]] core::UniqueFd open_root_on(const std::string& fsid, bool* watched) const;
    // The object of a fanotify record's handle `fh`, opened with `flags` through a root on
    // `fsid`; invalid when it cannot be (counted, and reported unless it is simply gone or the
    // file system has no root). `what` names the object in the report.
    [[nodiscard]] core::UniqueFd open_handle(const std::string& fsid, const void* fh, int flags,
                                             std::string_view what);
    enum class FdPath { ok, unreadable, deleted };
    // The path of the open `fd` (/proc/self/fd): unreadable when the kernel cannot print it
    // within a page, deleted when the object was removed after it was opened.
    [[nodiscard]] FdPath path_of(int fd, std::string* path) const;
    void report_all(RootEventKind kind, const std::string& detail);
    void report_fs(const std::string& fsid, RootEventKind kind, const std::string& detail);
    [[nodiscard]] const Root* root_under(const std::string& path) const;
    // The root that the directory open at `dirfd` lies under (walking up through ".."), if any.
    [[nodiscard]] const Root* root_above(int dirfd) const;
    // The path of the directory open at `dirfd`, which the kernel cannot print: found by walking
    // up to a root or a printable ancestor and naming each level (monitor/dir_path.hpp). Into
    // `path`; false when the change was reported otherwise (gone, outside every root, or a
    // rescan of the smallest subtree that covers it); `*inside` then says whether it concerned
    // a root.
    [[nodiscard]] bool resolve_deep(int dirfd, std::string* path, bool* inside);
    // Reports the file open at `fd` as an inode change (DirChange::inode) whatever its link
    // count: the daemon re-stats the names it holds for it.
    void report_inode(int fd);

    ChangeSink& sink_;
    core::UniqueFd fan_;
    bool has_rename_ = false;
    std::uint64_t mark_mask_ = 0;
    std::vector<Root> roots_;
    std::unordered_map<HandleKey, DirKey> handles_;
    // Slow-path answers: handle -> path under a root, or "" for outside every root. Cleared
    // whenever a directory moves (paths below it change) and when it grows past kMaxResolved.
    static constexpr std::size_t kMaxResolved = 65536;
    std::unordered_map<HandleKey, std::string> resolved_;
    Stats stats_;
    bool drained_ = true;
    // Roots opened to resolve handles through, by fsid, for one process_available() call: an
    // unlink storm brings an inode event per file, and opening the root for each cost more
    // than the rest of the event. Not kept longer: an open directory delays its own
    // FAN_DELETE_SELF until it is closed.
    std::unordered_map<std::string, core::UniqueFd> roots_open_;
    // Objects changed_outside() looked at in this process_available() call.
    std::unordered_set<HandleKey> outside_seen_;
    // Objects whose link count changed (an object-only event) in this call.
    std::unordered_set<HandleKey> links_changed_;
};

}  // namespace wsindex::monitor
