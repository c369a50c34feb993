// Mount points below a root: the fifth field of each mountinfo line, unescaped.
#include "daemon/mount_points.hpp"

#include <fstream>
#include <sstream>

#include "core/path.hpp"

namespace wsindex::daemon {
namespace {

// mountinfo writes space, tab, newline and backslash in paths as \ooo (three octal digits).
std::string unescape(std::string_view field) {
    const auto octal = [](char c) { return c >= '0' && c <= '7'; };
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() && octal(field[i + 1]) &&
            octal(field[i + 2]) && octal(field[i + 3])) {
            out.push_back(static_cast<char>(((field[i + 1] - '0') << 6) |
                                            ((field[i + 2] - '0') << 3) | (field[i + 3] - '0')));
            i += 3;
            continue;
        }
        out.push_back(field[i]);
    }
    return out;
}

}  // namespace

std::vector<std::string> mount_points_below(std::string_view text, const std::string& root) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(start, end - start);
        start = end + 1;
        // id parent major:minor root mount-point ...
        std::size_t pos = 0;
        std::string_view field;
        for (int i = 0; i < 5; ++i) {
            const std::size_t next = line.find(' ', pos);
            field = line.substr(
                pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
            if (next == std::string_view::npos) {
                pos = line.size();
                if (i < 4) field = {};
                break;
            }
            pos = next + 1;
        }
        if (field.empty()) continue;
        std::string mount_point = unescape(field);
        if (core::strictly_below(mount_point, root)) out.push_back(std::move(mount_point));
    }
    return out;
}

std::vector<std::string> mount_points_below(const std::string& root) {
    std::ifstream in("/proc/self/mountinfo");
    std::stringstream text;
    text << in.rdbuf();
    return mount_points_below(text.str(), root);
}

}  // namespace wsindex::daemon
