// Path helpers shared by the writer and the queries: root validation and the key range of a
// subtree (every prefix below "/a/b" lies in ["/a/b/", "/a/b0"), since '0' follows '/').
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wsindex::storage {

// True for an absolute path without trailing '/', empty, '.' or '..' components ("/" is fine).
bool is_normalized_root(std::string_view path);

// The stored prefix of a directory: its path with one trailing '/'.
inline std::string dir_prefix(std::string_view path) {
    std::string p(path);
    if (p.empty() || p.back() != '/') p.push_back('/');
    return p;
}

// [lo, hi) of the prefixes of `path` and of every directory below it.
struct PrefixRange {
    std::string lo;
    std::string hi;
};
inline PrefixRange subtree_range(std::string_view path) {
    PrefixRange r{dir_prefix(path), {}};
    r.hi = r.lo;
    r.hi.back() = static_cast<char>('/' + 1);
    return r;
}

// Number of components: "/" -> 0, "/a" -> 1, "/a/b" -> 2.
std::uint32_t path_depth(std::string_view path);

// "/a/b" -> "/a"; "/a" -> "/"; "/" -> "".
std::string_view parent_path(std::string_view path);
// "/a/b" -> "b"; "/" -> "/".
std::string_view base_name(std::string_view path);

}  // namespace wsindex::storage
