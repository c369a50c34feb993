// Absolute paths as text: normal-form check, lexical normalisation, parent.
#include "ipc/path_text.hpp"

#include <vector>

namespace wsindex::ipc {

bool is_normalized_absolute(std::string_view path) {
    if (path.empty() || path[0] != '/') return false;
    if (path.size() == 1) return true;
    if (path.back() == '/') return false;
    std::size_t pos = 1;
    while (pos <= path.size()) {
        std::size_t end = path.find('/', pos);
        if (end == std::string_view::npos) end = path.size();
        const std::string_view part = path.substr(pos, end - pos);
        if (part.empty() || part == "." || part == "..") return false;
        pos = end + 1;
    }
    return true;
}

std::string lexically_normal(std::string_view path, std::string_view cwd) {
    std::string joined;
    if (path.empty() || path[0] != '/') {
        joined.assign(cwd);
        joined.push_back('/');
    }
    joined.append(path);

    std::vector<std::string_view> parts;
    std::string_view rest(joined);
    while (!rest.empty()) {
        const std::size_t slash = rest.find('/');
        const std::string_view part = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            if (!parts.empty()) parts.pop_back();
            continue;
        }
        parts.push_back(part);
    }
    std::string out;
    for (const std::string_view part : parts) out.append("/").append(part);
    return out.empty() ? std::string("/") : out;
}

std::optional<std::string_view> parent_path(std::string_view path) {
    if (path.size() <= 1) return std::nullopt;
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) return std::nullopt;
    if (slash == 0) return path.substr(0, 1);
    return path.substr(0, slash);
}

}  // namespace wsindex::ipc
