// PruneMatcher: literal or fnmatch comparison of directory paths, names and file-system types.
#include "core/prune.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>

namespace wsindex::core {

namespace {

bool is_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

PruneMatcher::PruneMatcher(const PruneRules& rules) {
    for (const auto& p : rules.paths) {
        std::string text = p;
        // "/tmp/" names the same directory as "/tmp"; the walk reports it without the slash.
        while (text.size() > 1 && text.back() == '/') text.pop_back();
        paths_.push_back({text, is_glob(text)});
    }
    for (const auto& n : rules.names) names_.push_back({n, is_glob(n)});
    for (const auto& f : rules.fs_types) {
        std::string text = lower(f);
        // f_type has no FUSE subtype: "fuse.sshfs" can only mean "some FUSE file system".
        if (text.rfind("fuse.", 0) == 0) text = "fuse";
        fs_types_.push_back({text, is_glob(text)});
    }
}

bool PruneMatcher::prune_dir(std::string_view path, std::string_view name) const {
    for (const auto& p : names_) {
        if (p.glob ? fnmatch(p.text.c_str(), std::string(name).c_str(), 0) == 0 : p.text == name) {
            return true;
        }
    }
    for (const auto& p : paths_) {
        if (p.glob ? fnmatch(p.text.c_str(), path.data(), FNM_PATHNAME) == 0 : p.text == path) {
            return true;
        }
    }
    return false;
}

bool PruneMatcher::prune_fs(std::string_view fs_type) const {
    const std::string t = lower(fs_type);
    for (const auto& p : fs_types_) {
        if (p.glob ? fnmatch(p.text.c_str(), t.c_str(), 0) == 0 : p.text == t) return true;
    }
    return false;
}

}  // namespace wsindex::core
