// DirPathByDescriptors: the path of a directory open at a descriptor, when the kernel cannot
// print it (readlink of /proc/self/fd/N fails past a page), built without resolving any path.
//
// Walks up with openat(fd, "..", O_PATH) until it reaches a directory whose path is known (a
// root, by identity) or that the kernel can print, and names each level by finding its device
// and inode in its parent's listing (getdents64, then fstatat of the candidate), the way getcwd
// works. The result may be longer than PATH_MAX: the daemon opens such paths by descriptor, in
// pieces (core/resolve.hpp).
#pragma once

#include <sys/stat.h>

#include <functional>
#include <optional>
#include <string>

namespace wsindex::monitor {

enum class Printed { ok, unreadable, deleted };

struct DirPath {
    enum class Kind {
        full,     // `path` is the directory's
        partial,  // a level could not be named: `path` is the deepest ancestor whose path is known
        outside,  // reached "/" (or a directory no path is known for) without a known path
        gone,     // the directory (or an ancestor) was removed meanwhile
    };
    Kind kind = Kind::outside;
    std::string path;
};

struct DirPathSources {
    // The path of a directory known by its identity (a watched root), if it is one.
    std::function<std::optional<std::string>(const struct stat&)> known;
    // The kernel's path of an open directory (readlink of /proc/self/fd/N).
    std::function<Printed(int fd, std::string* path)> printed;
};

// Levels walked up at most: deeper than this the caller treats the directory as unresolvable.
inline constexpr std::size_t kMaxDirPathLevels = 65536;

// `dirfd`: the directory (any open mode). Its own printed path is not asked for (the caller
// already tried it).
[[nodiscard]] DirPath dir_path_by_descriptors(int dirfd, const DirPathSources& sources);

// The name under which the directory `child` (its stat) appears in the directory open at
// `parent_fd`, or nullopt when none does (renamed or removed meanwhile).
[[nodiscard]] std::optional<std::string> name_in_parent(int parent_fd, const struct stat& child);

}  // namespace wsindex::monitor
