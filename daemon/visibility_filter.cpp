// Visibility filter: the per-directory decisions, cached, and the path helpers they rely on.
#include "daemon/visibility_filter.hpp"

#include <utility>
#include <vector>

namespace wsindex::daemon {

std::optional<std::string_view> parent_dir(std::string_view path) {
    if (path.size() <= 1) return std::nullopt;
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos) return std::nullopt;
    if (slash == 0) return path.substr(0, 1);
    return path.substr(0, slash);
}

bool is_normalized_absolute(std::string_view path) {
    if (path.empty() || path[0] != '/') return false;
    if (path.size() == 1) return true;
    if (path.back() == '/') return false;
    std::size_t pos = 1;
    while (pos <= path.size()) {
        std::size_t end = path.find('/', pos);
        if (end == std::string_view::npos) end = path.size();
        std::string_view part = path.substr(pos, end - pos);
        if (part.empty() || part == "." || part == "..") return false;
        pos = end + 1;
    }
    return true;
}
VisibilityFilter::VisibilityFilter(Caller caller, DirPermSource source)
    : caller_(std::move(caller)), source_(std::move(source)) {}

const VisibilityFilter::DirDecision& VisibilityFilter::decide(const std::string& dir) {
    if (auto it = cache_.find(dir); it != cache_.end()) return it->second;
    // Walk up to the nearest decided ancestor (or past "/"), then decide downwards, so each
    // directory costs one lookup however many entries share it.
    std::vector<std::string> chain{dir};
    const DirDecision* above = nullptr;
    for (std::string cur = dir;;) {
        auto parent = parent_dir(cur);
        if (!parent) break;
        std::string up(*parent);
        if (auto it = cache_.find(up); it != cache_.end()) {
            above = &it->second;  // unordered_map nodes stay put when later inserts rehash
            break;
        }
        chain.push_back(up);
        cur = std::move(up);
    }
    // "/" has no parent: nothing above it restricts.
    bool searchable_above = above == nullptr || above->searchable;
    bool listable_above = above == nullptr || above->listable;
    const DirDecision* result = nullptr;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        DirDecision decision;
        if (searchable_above) {
            ++lookups_;
            if (auto perm = source_(*it)) {
                decision.searchable = permits(caller_, *perm, kSearch);
                // find lists a directory only if it reached it by listing every ancestor: a
                // search-only ancestor (0711) hides the names below it, however open they are.
                decision.listable =
                    listable_above && decision.searchable && permits(caller_, *perm, kRead);
            }
        }
        // No lookup below an unsearchable directory: everything there is hidden anyway.
        searchable_above = decision.searchable;
        listable_above = decision.listable;
        result = &cache_.emplace(*it, decision).first->second;
    }
    return *result;
}

bool VisibilityFilter::can_search(std::string_view dir) {
    if (!is_normalized_absolute(dir)) return false;
    if (caller_.is_root()) return true;
    return decide(std::string(dir)).searchable;
}

bool VisibilityFilter::can_list(std::string_view dir) {
    if (!is_normalized_absolute(dir)) return false;
    if (caller_.is_root()) return true;
    return decide(std::string(dir)).listable;
}

bool VisibilityFilter::can_see(std::string_view path) {
    if (!is_normalized_absolute(path)) return false;
    auto parent = parent_dir(path);
    if (!parent) return true;  // "/" itself
    if (caller_.is_root()) return true;
    return decide(std::string(*parent)).listable;
}

}  // namespace wsindex::daemon
