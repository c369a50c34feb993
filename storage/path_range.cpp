// Path helpers: normalized-root check, depth, parent and base name of absolute paths.
#include "storage/path_range.hpp"

namespace wsindex::storage {

bool is_normalized_root(std::string_view path) {
    if (path.empty() || path.front() != '/') return false;
    if (path == "/") return true;
    if (path.back() == '/') return false;
    std::size_t start = 1;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos) end = path.size();
        const std::string_view part = path.substr(start, end - start);
        if (part.empty() || part == "." || part == "..") return false;
        start = end + 1;
    }
    return true;
}

std::uint32_t path_depth(std::string_view path) {
    std::uint32_t depth = 0;
    for (std::size_t i = 0; i < path.size(); ++i) {
        if (path[i] == '/' && i + 1 < path.size()) ++depth;
    }
    return depth;
}

std::string_view parent_path(std::string_view path) {
    if (path == "/") return {};
    const std::size_t slash = path.rfind('/');
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::string_view base_name(std::string_view path) {
    if (path == "/") return path;
    return path.substr(path.rfind('/') + 1);
}

}  // namespace wsindex::storage
