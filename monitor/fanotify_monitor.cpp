// FanotifyMonitor: group setup, marks, and the parsing of events and their info records.
#include "monitor/fanotify_monitor.hpp"

#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/path.hpp"
#include "core/resolve.hpp"
#include "monitor/dir_path.hpp"

namespace wsindex::monitor {
namespace {

constexpr std::uint64_t kBaseMask = FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO |
                                    FAN_ATTRIB | FAN_MODIFY | FAN_CLOSE_WRITE | FAN_DELETE_SELF |
                                    FAN_MOVE_SELF | FAN_ONDIR;
constexpr unsigned kInitFlags =
    FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_REPORT_FID | FAN_CLOEXEC | FAN_NONBLOCK;
constexpr unsigned kEventFlags = O_RDONLY | O_LARGEFILE | O_CLOEXEC;
// Events through a name outside every root that change what another name of the file shows.
// Not a create or delete: a new or removed name changes the link count, and the kernel
// reports that as an inode-only FAN_ATTRIB (changed_object) as well.
constexpr std::uint64_t kOutsideChangeMask =
    FAN_MODIFY | FAN_ATTRIB | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_RENAME;
// Further tries of open_by_handle_at after ENOMEM (see open_handle).
constexpr int kHandleRetries = 3;
// Buffers read per process_available(): bounds the work of one call under a storm.
constexpr int kMaxReadsPerCall = 16;

bool is_name_record(unsigned type) {
    return type == FAN_EVENT_INFO_TYPE_DFID_NAME || type == FAN_EVENT_INFO_TYPE_OLD_DFID_NAME ||
           type == FAN_EVENT_INFO_TYPE_NEW_DFID_NAME;
}

// `path` equals `root` or lies below it.
}  // namespace

core::Status FanotifyMonitor::open() {
    int fd = ::fanotify_init(kInitFlags | FAN_REPORT_TARGET_FID, kEventFlags);
    if (fd < 0 && errno == EINVAL) fd = ::fanotify_init(kInitFlags, kEventFlags);  // before 5.17
    if (fd < 0) return core::Status::from_errno(errno, "fanotify_init");
    fan_.reset(fd);
    return {};
}

core::Status FanotifyMonitor::add_root(const std::string& root) {
    if (!fan_.valid()) return core::Status::from_errno(EBADF, "fanotify group not open");
    Root r;
    r.path = root;
    // No fd is kept on the root: an open directory is not destroyed by rmdir until it is
    // closed, and its FAN_DELETE_SELF would wait for that.
    // By descriptor (no symlink followed in any component): the mark and the identity are
    // those of the root itself, not of what a symlink swapped into its path points at.
    const core::UniqueFd dir(core::open_dir_absolute(root, O_RDONLY));
    if (!dir.valid()) return core::Status::from_errno(-dir.get(), "open " + root);
    struct stat st {};
    if (::fstat(dir.get(), &st) != 0) return core::Status::from_errno(errno, "fstat " + root);
    r.dev = st.st_dev;
    r.ino = st.st_ino;
    if (auto s = handle_key_of(dir.get(), r.handle); !s) return s;
    r.fsid = r.handle.substr(0, sizeof(__kernel_fsid_t));

    const unsigned flags = FAN_MARK_ADD | FAN_MARK_FILESYSTEM;
    if (mark_mask_ == 0) {
        // FAN_RENAME (5.17) reports both ends of a move in one event; older kernels refuse it.
        if (::fanotify_mark(fan_.get(), flags, kBaseMask | FAN_RENAME, dir.get(), nullptr) == 0) {
            mark_mask_ = kBaseMask | FAN_RENAME;
            has_rename_ = true;
        } else if (errno != EINVAL) {
            return core::Status::from_errno(errno, "fanotify_mark " + root);
        }
    }
    if (mark_mask_ == 0) mark_mask_ = kBaseMask;
    if (::fanotify_mark(fan_.get(), flags, mark_mask_, dir.get(), nullptr) != 0) {
        return core::Status::from_errno(errno, "fanotify_mark " + root);
    }
    roots_.push_back(std::move(r));
    return {};
}

core::Status FanotifyMonitor::register_dir(int dirfd, DirKey key) {
    HandleKey h;
    if (auto s = handle_key_of(dirfd, h); !s) return s;
    handles_[std::move(h)] = key;
    return {};
}

core::Status FanotifyMonitor::register_path(const std::string& path, DirKey key) {
    const core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) return core::Status::from_errno(errno, "open " + path);
    return register_dir(fd.get(), key);
}

core::Status FanotifyMonitor::process_available() {
    // Large enough for hundreds of events per read.
    alignas(8) static thread_local char buf[64 * 1024];
    drained_ = false;
    struct CloseRoots {
        std::unordered_map<std::string, core::UniqueFd>& open;
        std::unordered_set<HandleKey>& seen;
        std::unordered_set<HandleKey>& links_changed;
        ~CloseRoots() {
            open.clear();
            seen.clear();
            links_changed.clear();
        }
    } close_roots{roots_open_, outside_seen_, links_changed_};
    for (int i = 0; i < kMaxReadsPerCall; ++i) {
        const ssize_t n = ::read(fan_.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EAGAIN) {
                drained_ = true;
                return {};
            }
            if (errno == EINTR) continue;
            return core::Status::from_errno(errno, "read fanotify");
        }
        // Events are only 4-byte aligned (names pad to 4), the metadata wants 8: copy each
        // header out instead of using FAN_EVENT_OK/FAN_EVENT_NEXT on the buffer in place.
        std::size_t off = 0;
        const auto len = static_cast<std::size_t>(n);
        while (len - off >= FAN_EVENT_METADATA_LEN) {
            struct fanotify_event_metadata meta {};
            std::memcpy(&meta, buf + off, sizeof meta);
            if (meta.event_len < FAN_EVENT_METADATA_LEN || meta.event_len > len - off) break;
            if (meta.vers != FANOTIFY_METADATA_VERSION) {
                return core::Status::from_errno(EPROTO, "fanotify metadata version");
            }
            if (meta.fd >= 0) ::close(meta.fd);  // not in FID mode; never leak one
            ++stats_.events;
            handle_event(meta, buf + off + meta.metadata_len, buf + off + meta.event_len);
            off += meta.event_len;
        }
    }
    return {};
}

void FanotifyMonitor::handle_event(const struct fanotify_event_metadata& meta, const char* p,
                                   const char* end) {
    if (meta.mask & FAN_Q_OVERFLOW) {
        ++stats_.overflows;
        report_all(RootEventKind::overflow, "fanotify queue overflow");
        return;
    }
    if ((meta.mask & FAN_ONDIR) != 0 &&
        (meta.mask & (FAN_MOVED_FROM | FAN_MOVED_TO | FAN_RENAME | FAN_MOVE_SELF)) != 0) {
        // A directory moved: every path below it changed, so no resolved path is trusted.
        resolved_.clear();
    }
    bool named_directory = false;  // a DFID or DFID_NAME record came with the event
    bool named_inside = false;     // ... and one of them named a directory under a root
    bool named_outside = false;    // ... and one named a directory outside every root
    std::optional<HandleKey> object_key;
    const void* object_fh = nullptr;
    while (p + sizeof(struct fanotify_event_info_header) <= end) {
        const auto* hdr = reinterpret_cast<const struct fanotify_event_info_header*>(p);
        if (hdr->len == 0 || p + hdr->len > end) break;
        const unsigned type = hdr->info_type;
        if (type == FAN_EVENT_INFO_TYPE_FID && (meta.mask & FAN_ONDIR) == 0) {
            const auto* fid = reinterpret_cast<const struct fanotify_event_info_fid*>(p);
            object_fh = fid->handle;
            object_key =
                make_handle_key(fid->fsid, *static_cast<const struct file_handle*>(object_fh));
        }
        if (is_name_record(type) || type == FAN_EVENT_INFO_TYPE_DFID) {
            named_directory = true;
            const auto* fid = reinterpret_cast<const struct fanotify_event_info_fid*>(p);
            const auto* fh = reinterpret_cast<const struct file_handle*>(fid->handle);
            const HandleKey key = make_handle_key(fid->fsid, *fh);
            const char* name = is_name_record(type)
                                   ? reinterpret_cast<const char*>(fh->f_handle + fh->handle_bytes)
                                   : ".";
            if (std::strcmp(name, ".") == 0) {
                // The record names the object itself: a directory's self event. Only a root's
                // matters; any other directory's removal is reported in its parent.
                if (meta.mask & (FAN_DELETE_SELF | FAN_MOVE_SELF)) {
                    for (auto& r : roots_) {
                        if (r.gone || r.handle != key) continue;
                        r.gone = true;
                        const bool deleted = (meta.mask & FAN_DELETE_SELF) != 0;
                        sink_.root_event(
                            {deleted ? RootEventKind::root_deleted : RootEventKind::root_moved,
                             r.path, deleted ? "root deleted" : "root moved"});
                    }
                } else {
                    // e.g. an attribute change of the directory itself
                    const bool inside = dirty_dir(key, fh, {});
                    named_inside |= inside;
                    named_outside |= !inside;
                }
            } else {
                const bool inside = dirty_dir(key, fh, name);  // the parent directory of `name`
                named_inside |= inside;
                named_outside |= !inside;
            }
        }
        // FAN_EVENT_INFO_TYPE_FID names the child itself: with a directory record, the named
        // change of its parent covers it.
        p += hdr->len;
    }
    if (!object_key) return;
    if (!named_directory) {
        links_changed_.insert(*object_key);
        changed_object(*object_key, object_fh);
    } else if (!named_inside && (meta.mask & FAN_CREATE) != 0) {
        // A file created outside the roots has one name, and its later events in this read
        // need no look. Unless it is a new name of an existing file: link() reports the link
        // count change (an object-only event, above) before the name.
        if (!links_changed_.contains(*object_key)) outside_seen_.insert(*object_key);
    } else if (!named_inside && (meta.mask & kOutsideChangeMask) != 0) {
        changed_outside(*object_key, object_fh);
    } else if (named_outside && (meta.mask & FAN_RENAME) != 0) {
        // Moved out of the roots (or in): a name that a link made inside a root and that left
        // before its directory was re-listed leaves the other names' link count unseen there.
        changed_outside(*object_key, object_fh);
    }
}

core::UniqueFd FanotifyMonitor::open_root_on(const std::string& fsid, bool* watched) const {
    *watched = false;
    for (const auto& r : roots_) {
        if (r.gone || r.fsid != fsid) continue;
        *watched = true;
        // Opened per lookup (see add_root); not O_PATH: open_by_handle_at wants EBADF-free fds.
        core::UniqueFd via(core::open_dir_absolute(r.path, O_RDONLY));
        if (via.valid()) return via;
    }
    return core::UniqueFd();
}

core::UniqueFd FanotifyMonitor::open_handle(const std::string& fsid, const void* fh_ptr, int flags,
                                            std::string_view what) {
    // A root on the object's file system to resolve through, opened once per
    // process_available() call (roots_open_).
    auto cached = roots_open_.find(fsid);
    if (cached == roots_open_.end()) {
        bool watched = false;
        core::UniqueFd opened = open_root_on(fsid, &watched);
        if (!watched) {
            ++stats_.outside_roots;
            return {};
        }
        cached = roots_open_.emplace(fsid, std::move(opened)).first;
    }
    const core::UniqueFd& via = cached->second;
    if (!via.valid()) {
        ++stats_.unresolvable;
        report_fs(fsid, RootEventKind::unresolvable, "no root of the file system can be opened");
        return {};
    }
    // open_by_handle_at wants a writable struct; copy the record's handle.
    const auto* fh = static_cast<const struct file_handle*>(fh_ptr);
    std::string storage(sizeof(struct file_handle) + fh->handle_bytes, '\0');
    std::memcpy(storage.data(), fh, storage.size());
    auto* handle = reinterpret_cast<struct file_handle*>(storage.data());
    core::UniqueFd fd(::open_by_handle_at(via.get(), handle, flags | O_CLOEXEC));
    // ENOMEM is what the kernel passes on when reconnecting a directory to its parents failed
    // transiently (a directory on the path moved meanwhile): seen under a storm of renames.
    // A few more tries spare a rescan of the whole root.
    for (int retry = 0; !fd.valid() && errno == ENOMEM && retry < kHandleRetries; ++retry) {
        fd.reset(::open_by_handle_at(via.get(), handle, flags | O_CLOEXEC));
    }
    if (!fd.valid()) {
        if (errno == ESTALE || errno == ENOENT) {
            // Gone: its removal is (or was) reported in its directory.
            ++stats_.stale_handles;
            return {};
        }
        ++stats_.unresolvable;
        report_fs(fsid, RootEventKind::unresolvable,
                  "open_by_handle_at (" + std::string(what) + "): " + std::strerror(errno) +
                      ", handle type " + std::to_string(fh->handle_type) + ", " +
                      std::to_string(fh->handle_bytes) + " bytes");
    }
    return fd;
}

FanotifyMonitor::FdPath FanotifyMonitor::path_of(int fd, std::string* path) const {
    char link[64];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    path->assign(4096, '\0');
    const ssize_t n = ::readlink(link, path->data(), path->size());
    if (n < 0 || static_cast<std::size_t>(n) >= path->size()) return FdPath::unreadable;
    path->resize(static_cast<std::size_t>(n));
    // Removed after it was opened: the kernel appends " (deleted)".
    constexpr std::string_view kDeleted = " (deleted)";
    if (path->size() > kDeleted.size() &&
        path->compare(path->size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
        return FdPath::deleted;
    }
    return FdPath::ok;
}

void FanotifyMonitor::changed_object(const HandleKey& key, const void* fh_ptr) {
    const std::string fsid = key.substr(0, sizeof(__kernel_fsid_t));
    const core::UniqueFd fd = open_handle(fsid, fh_ptr, O_PATH, "file");
    if (!fd.valid()) return;
    std::string path;
    switch (path_of(fd.get(), &path)) {
        case FdPath::unreadable:
            // A file has no ".." to walk up from; the daemon finds the names it holds for it
            // by its inode instead.
            ++stats_.deep_paths;
            report_inode(fd.get());
            return;
        case FdPath::deleted:
            // The kernel printed a removed name (still open somewhere); the file may have
            // others, inside a root.
            ++stats_.stale_handles;
            report_if_linked(fd.get(), true);
            return;
        case FdPath::ok:
            break;
    }
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos || root_under(path) == nullptr) {
        // The kernel printed a name outside every root; another name may be inside one.
        ++stats_.outside_roots;
        report_if_linked(fd.get(), true);
        return;
    }
    ++stats_.slow_path;
    // One of its names (any, if it has several): that one is re-stat'ed, and a name with
    // nlink > 1 makes its directory re-listed whole, which updates the others (inode_sync).
    std::string name = path.substr(slash + 1);
    path.resize(slash == 0 ? 1 : slash);
    sink_.dir_changed(DirChange{std::nullopt, std::move(path), std::move(name), {}});
    // But that name's directory may leave every root before the batch stats it (`ln a d/b`,
    // then `mv d` out): the name is gone, and the other names, whose link count changed, are
    // named by no event. So a file with several names is reported as an inode as well; the
    // daemon looks its indexed names up (found by the fanotify convergence test).
    report_if_linked(fd.get(), false);
}

bool FanotifyMonitor::dirty_dir(const HandleKey& key, const void* fh_ptr, std::string_view name) {
    if (auto it = handles_.find(key); it != handles_.end()) {
        sink_.dir_changed(DirChange{it->second, {}, std::string(name), {}});
        return true;
    }
    if (auto it = resolved_.find(key); it != resolved_.end()) {
        if (it->second.empty()) {
            ++stats_.outside_roots;
            return false;
        }
        sink_.dir_changed(DirChange{std::nullopt, it->second, std::string(name), {}});
        return true;
    }
    // Slow path: an unregistered directory. Unless it is known to be outside every root, an
    // event counts as inside: a directory gone or unresolvable is reported by other means.
    const std::string fsid = key.substr(0, sizeof(__kernel_fsid_t));
    const core::UniqueFd fd = open_handle(fsid, fh_ptr, O_PATH | O_DIRECTORY, "directory");
    if (!fd.valid()) return roots_open_.contains(fsid);
    std::string path;
    switch (path_of(fd.get(), &path)) {
        case FdPath::unreadable: {
            // A path the kernel cannot print (longer than a page, or not reachable from this
            // mount namespace): built from descriptors instead.
            bool inside = false;
            if (!resolve_deep(fd.get(), &path, &inside)) return inside;
            break;
        }
        case FdPath::deleted:
            ++stats_.slow_path;
            ++stats_.stale_handles;
            return true;
        case FdPath::ok:
            break;
    }
    ++stats_.slow_path;
    // Remembered until a directory moves (handle_event), bounded: on a busy file system most
    // events name the same few directories, and resolving costs four system calls.
    if (resolved_.size() >= kMaxResolved) resolved_.clear();
    if (root_under(path) == nullptr) {
        ++stats_.outside_roots;
        resolved_.emplace(key, std::string());
        return false;
    }
    resolved_.emplace(key, path);
    sink_.dir_changed(DirChange{std::nullopt, std::move(path), std::string(name), {}});
    return true;
}

void FanotifyMonitor::changed_outside(const HandleKey& key, const void* fh_ptr) {
    if (!outside_seen_.insert(key).second) return;
    const std::string fsid = key.substr(0, sizeof(__kernel_fsid_t));
    const core::UniqueFd fd = open_handle(fsid, fh_ptr, O_PATH, "file");
    if (fd.valid()) report_if_linked(fd.get(), true);
}

void FanotifyMonitor::report_inode(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) return;
    DirChange change;
    change.inode =
        InodeId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
    sink_.dir_changed(change);
}

bool FanotifyMonitor::resolve_deep(int dirfd, std::string* path, bool* inside) {
    DirPathSources sources;
    sources.known = [this](const struct stat& st) -> std::optional<std::string> {
        for (const auto& r : roots_) {
            if (!r.gone && r.dev == st.st_dev && r.ino == st.st_ino) return r.path;
        }
        return std::nullopt;
    };
    sources.printed = [this](int fd, std::string* printed) {
        switch (path_of(fd, printed)) {
            case FdPath::ok:
                return Printed::ok;
            case FdPath::deleted:
                return Printed::deleted;
            case FdPath::unreadable:
                break;
        }
        return Printed::unreadable;
    };
    DirPath found = dir_path_by_descriptors(dirfd, sources);
    const Root* root = nullptr;
    switch (found.kind) {
        case DirPath::Kind::full:
            if (root_under(found.path) == nullptr) break;
            ++stats_.deep_paths;
            *path = std::move(found.path);
            return true;
        case DirPath::Kind::gone:
            // Removed meanwhile: its removal is (or was) reported in its parent.
            ++stats_.stale_handles;
            *inside = true;
            return false;
        case DirPath::Kind::partial:
            // A level was renamed or removed while it was named: what lies below the deepest
            // ancestor known is rescanned (its own events report the rest).
            root = root_under(found.path);
            if (root == nullptr) break;
            ++stats_.unresolvable;
            sink_.root_event({RootEventKind::unresolvable, root->path,
                              "a changed directory's path could not be resolved below here",
                              found.path == root->path ? std::string() : found.path});
            *inside = true;
            return false;
        case DirPath::Kind::outside:
            // No known path above (deeper than the walk goes, or out of this mount namespace):
            // only the root above it, if any, can be rescanned.
            root = root_above(dirfd);
            if (root == nullptr) break;
            ++stats_.unresolvable;
            sink_.root_event({RootEventKind::unresolvable,
                              root->path,
                              "a changed directory's path cannot be resolved",
                              {}});
            *inside = true;
            return false;
    }
    ++stats_.outside_roots;
    *inside = false;
    return false;
}

void FanotifyMonitor::report_if_linked(int fd, bool outside) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode) || st.st_nlink < 2) return;
    if (outside) ++stats_.linked_outside;
    DirChange change;
    change.inode =
        InodeId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
    sink_.dir_changed(change);
}

const FanotifyMonitor::Root* FanotifyMonitor::root_above(int dirfd) const {
    // Each step opens the parent (O_PATH: no permission needed beyond search) and compares
    // device and inode with the roots; "/" is its own parent.
    core::UniqueFd current(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
    struct stat st {};
    if (!current.valid() || ::fstat(current.get(), &st) != 0) return nullptr;
    for (;;) {
        for (const auto& r : roots_) {
            if (!r.gone && r.dev == st.st_dev && r.ino == st.st_ino) return &r;
        }
        core::UniqueFd parent(
            ::openat(current.get(), "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        struct stat up {};
        if (!parent.valid() || ::fstat(parent.get(), &up) != 0) return nullptr;
        if (up.st_dev == st.st_dev && up.st_ino == st.st_ino) return nullptr;  // reached "/"
        current = std::move(parent);
        st = up;
    }
}

const FanotifyMonitor::Root* FanotifyMonitor::root_under(const std::string& path) const {
    for (const auto& r : roots_) {
        if (!r.gone && core::at_or_below(path, r.path)) return &r;
    }
    return nullptr;
}

void FanotifyMonitor::report_all(RootEventKind kind, const std::string& detail) {
    for (const auto& r : roots_) {
        if (!r.gone) sink_.root_event({kind, r.path, detail});
    }
}

void FanotifyMonitor::report_fs(const std::string& fsid, RootEventKind kind,
                                const std::string& detail) {
    for (const auto& r : roots_) {
        if (!r.gone && r.fsid == fsid) sink_.root_event({kind, r.path, detail});
    }
}

void FanotifyMonitor::check_roots() {
    for (auto& r : roots_) {
        if (r.gone) continue;
        struct stat st {};
        const core::UniqueFd dir(core::open_dir_absolute(r.path, O_PATH));
        if (!dir.valid() || ::fstat(dir.get(), &st) != 0 || st.st_dev != r.dev ||
            st.st_ino != r.ino) {
            r.gone = true;
            sink_.root_event({RootEventKind::mark_lost, r.path,
                              "the root is no longer the directory that was marked"});
        }
    }
}

}  // namespace wsindex::monitor
