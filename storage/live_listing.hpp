// What a live update and its subdirectory check share: the entry columns read back from the
// index, what counts as the same directory, which subdirectories are walked again, and the path
// of an entry of a directory.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "core/walk_result.hpp"
#include "storage/live_update.hpp"

namespace wsindex::storage {

inline constexpr const char* kEntryColumnsSql =
    "type, size, blocks, mtime_ns, coalesce(ctime_ns, mtime_ns), mode, uid, gid, dev, ino,"
    " nlink, error";

// The same directory under the same name: its indexed subtree stays.
inline bool same_directory(const core::WalkResult& old, const core::WalkResult& fresh) {
    return old.is_dir() && fresh.is_dir() && old.has_stat && fresh.has_stat &&
           old.dev == fresh.dev && old.ino == fresh.ino;
}

// Whether the subdirectory `name` of `dir` is walked again whatever its row (RelistedDir::rewalk).
inline bool walked_again(const RelistedDir& dir, std::string_view name) {
    return dir.partial || std::binary_search(dir.rewalk.begin(), dir.rewalk.end(), name);
}

// Whether the subdirectory `now` of `dir`, indexed as `old`, is walked again whatever its
// identity: walked_again above, or with RelistedDir::rewalk_changed a change time that moved.
inline bool walked_again(const RelistedDir& dir, const core::WalkResult& old,
                         const core::WalkResult& now) {
    if (walked_again(dir, now.name())) return true;
    return dir.rewalk_changed && old.has_stat && now.has_stat && old.ctime_ns != now.ctime_ns;
}

inline std::string child_path(std::string_view dir, std::string_view name) {
    std::string p(dir);
    if (p.empty() || p.back() != '/') p.push_back('/');
    p.append(name);
    return p;
}

}  // namespace wsindex::storage
