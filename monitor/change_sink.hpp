// The seam of the change monitor: what a backend reports — dirty directories and root events.
//
// Backends (fanotify, inotify) turn kernel events into calls on a ChangeSink; the coalescer is a
// ChangeSink too. Nothing here knows of the index: a directory is named by the key the client
// registered for it, or by its path bytes when the backend had to resolve it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wsindex::monitor {

// The client's identity of an indexed directory (a row id, for the daemon).
using DirKey = std::uint64_t;

// A file by device and inode number (as lstat reports them).
struct InodeId {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    friend bool operator==(const InodeId&, const InodeId&) = default;
    friend auto operator<=>(const InodeId&, const InodeId&) = default;
};

// One directory whose listing may have changed: re-list it (one level) and re-stat its entries.
// `key` is set when the directory was registered; `path` is set when the backend knows it
// (always for inotify; for fanotify only on the slow path that resolves unknown handles).
//
// Or, with neither key nor path, a hard-linked file that changed through a name outside every
// root (`inode`): its names inside a root were not named by the event, and only the index knows
// them (the daemon re-stats the names it holds for that inode).
struct DirChange {
    std::optional<DirKey> key;
    std::string path;
    // From a backend: the entry of the directory the event named (created, deleted, moved,
    // written, attributes changed); empty when the event concerned the directory as a whole
    // (its own attributes) or named nothing.
    std::string name;
    // From the coalescer: the names of every event it merged, sorted; empty when at least one
    // named nothing or there were too many to be worth stat'ing one by one: re-list it whole.
    std::vector<std::string> names;
    // From the coalescer, with `names` empty (the whole directory): the names its events named
    // (at most Coalescer::kMaxNames). Those that are subdirectories are walked again in full:
    // one may have left the roots and come back as the same directory with other contents.
    std::vector<std::string> rewalk;
    // From the coalescer, with `names` empty: more names than Coalescer::kMaxNames were named,
    // and those beyond it are not in `rewalk`. Every subdirectory whose indexed row differs in
    // identity or change time from the listing is then walked again (a rename changes a
    // directory's ctime), since any of them may be one of the names dropped.
    bool names_dropped = false;
    // Set instead of `key` and `path` for a hard-linked file (see above).
    std::optional<InodeId> inode;

    // Two changes name the same directory when their keys match, or (both without key) their
    // paths do; two inode changes, when their inodes do.
    [[nodiscard]] std::string identity() const {
        if (inode) return "i" + std::to_string(inode->dev) + ":" + std::to_string(inode->ino);
        return key ? "k" + std::to_string(*key) : "p" + path;
    }
};

enum class RootEventKind {
    overflow,        // the kernel queue overflowed: changes were lost; rescan the root
    root_deleted,    // the root directory itself was deleted
    root_moved,      // the root directory itself was moved (renamed) away
    mark_lost,       // the watch on the root's file system is gone (e.g. unmounted)
    unresolvable,    // an event's directory could not be identified; rescan `subtree` or the root
    needs_periodic,  // the backend cannot follow the whole root (watch budget); rescan it
};

[[nodiscard]] const char* to_string(RootEventKind kind);

// Something that concerns a whole root, identified by the path given to add_root().
struct RootEvent {
    RootEventKind kind;
    std::string root;
    std::string detail;  // for the log: why
    // unresolvable: the deepest directory known to hold what could not be identified (under
    // `root`); empty when that is the root itself.
    std::string subtree;
};

class ChangeSink {
  public:
    virtual ~ChangeSink() = default;
    virtual void dir_changed(const DirChange& change) = 0;
    virtual void root_event(const RootEvent& event) = 0;
};

}  // namespace wsindex::monitor
