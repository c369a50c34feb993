// What a live update and its subdirectory check share: the entry columns read back from the
// index, what counts as the same directory, and the path of an entry of a directory.
#pragma once

#include <string>
#include <string_view>

#include "core/walk_result.hpp"

namespace wsindex::storage {

inline constexpr const char* kEntryColumnsSql =
    "type, size, blocks, mtime_ns, coalesce(ctime_ns, mtime_ns), mode, uid, gid, dev, ino,"
    " nlink, error";

// The same directory under the same name: its indexed subtree stays.
inline bool same_directory(const core::WalkResult& old, const core::WalkResult& fresh) {
    return old.is_dir() && fresh.is_dir() && old.has_stat && fresh.has_stat &&
           old.dev == fresh.dev && old.ino == fresh.ino;
}

inline std::string child_path(std::string_view dir, std::string_view name) {
    std::string p(dir);
    if (p.empty() || p.back() != '/') p.push_back('/');
    p.append(name);
    return p;
}

}  // namespace wsindex::storage
