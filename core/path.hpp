// Path strings of the index: absolute, normalized ("/" or "/a/b", no trailing '/', no "." or ".."
// components), bytes. How one relates to another, in one place (the walker, the monitor, the live
// index and the queries all ask). These compare strings only: what a path names on disk is
// reached by descriptor (core/resolve.hpp), never by resolving these strings.
#pragma once

#include <string>
#include <string_view>

namespace wsindex::core {

// `path` is `root` or lies below it: "/a/b" is at or below "/a" and "/", not below "/ab".
inline bool at_or_below(std::string_view path, std::string_view root) {
    if (root == "/") return !path.empty() && path.front() == '/';
    return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
           (path.size() == root.size() || path[root.size()] == '/');
}

// `path` lies below `dir`, not equal to it.
inline bool strictly_below(std::string_view path, std::string_view dir) {
    return path.size() != dir.size() && at_or_below(path, dir);
}

// `dir` + "/" + `name` ("/" + name for the root).
inline std::string child_path(std::string_view dir, std::string_view name) {
    std::string out;
    out.reserve(dir.size() + 1 + name.size());
    out.append(dir);
    if (out.empty() || out.back() != '/') out.push_back('/');
    out.append(name);
    return out;
}

}  // namespace wsindex::core
