// DirPathByDescriptors: walk up through "..", name each level in its parent's listing.
#include "monitor/dir_path.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "core/dir_reader.hpp"
#include "core/fs_ops.hpp"
#include "core/unique_fd.hpp"

namespace wsindex::monitor {
namespace {

bool same_inode(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

std::optional<std::string> name_in_parent(int parent_fd, const struct stat& child) {
    // An O_PATH descriptor cannot be listed: the parent is opened again, through ".".
    const core::UniqueFd dir(::openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) return std::nullopt;
    core::DirBuffer listing;
    if (listing.read_all(core::real_fs_ops(), dir.get()) != 0) return std::nullopt;
    const auto confirmed = [&](const char* name) {
        struct stat st {};
        return ::fstatat(dir.get(), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && same_inode(st, child);
    };
    // The listing's inode numbers first; a mount point lists the inode below the mount, so
    // failing that every directory entry is stat'ed.
    for (std::size_t i = 0; i < listing.count(); ++i) {
        const core::LinuxDirent64& e = listing.entry(i);
        if (e.d_ino == child.st_ino && confirmed(e.d_name)) return std::string(e.d_name);
    }
    for (std::size_t i = 0; i < listing.count(); ++i) {
        const core::LinuxDirent64& e = listing.entry(i);
        if (e.d_type != DT_DIR && e.d_type != DT_UNKNOWN) continue;
        if (e.d_ino != child.st_ino && confirmed(e.d_name)) return std::string(e.d_name);
    }
    return std::nullopt;
}

DirPath dir_path_by_descriptors(int dirfd, const DirPathSources& sources) {
    DirPath out;
    core::UniqueFd current(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
    struct stat st {};
    if (!current.valid() || ::fstat(current.get(), &st) != 0) {
        out.kind = DirPath::Kind::gone;
        return out;
    }
    // Names from the directory up; cleared when a level cannot be named (nothing below it can
    // be placed then, and the path found is that level's parent's).
    std::vector<std::string> names;
    bool lost = false;
    std::string base;
    for (std::size_t level = 0;; ++level) {
        if (level == kMaxDirPathLevels) return out;  // outside: too deep to tell
        if (auto known = sources.known(st)) {
            base = std::move(*known);
            break;
        }
        if (level > 0) {
            const Printed p = sources.printed(current.get(), &base);
            if (p == Printed::ok) break;
            if (p == Printed::deleted) {
                out.kind = DirPath::Kind::gone;
                return out;
            }
        }
        core::UniqueFd parent(
            ::openat(current.get(), "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        struct stat up {};
        if (!parent.valid() || ::fstat(parent.get(), &up) != 0) {
            out.kind = DirPath::Kind::gone;
            return out;
        }
        if (same_inode(up, st)) return out;  // "/": no known path above
        if (auto name = name_in_parent(parent.get(), st)) {
            names.push_back(std::move(*name));
        } else {
            names.clear();
            lost = true;
        }
        current = std::move(parent);
        st = up;
    }
    out.path = std::move(base);
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
        if (out.path.empty() || out.path.back() != '/') out.path.push_back('/');
        out.path.append(*it);
    }
    out.kind = lost ? DirPath::Kind::partial : DirPath::Kind::full;
    return out;
}

}  // namespace wsindex::monitor
