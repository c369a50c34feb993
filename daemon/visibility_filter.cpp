// Visibility filter: the per-directory decisions, cached.
#include "daemon/visibility_filter.hpp"

#include <utility>
#include <vector>

#include "ipc/path_text.hpp"

namespace wsindex::daemon {

VisibilityFilter::VisibilityFilter(Caller caller, DirPermSource source)
    : caller_(std::move(caller)), source_(std::move(source)) {}

const VisibilityFilter::DirDecision& VisibilityFilter::decide(const std::string& dir) {
    if (auto it = cache_.find(dir); it != cache_.end()) return it->second;
    // Walk up to the nearest decided ancestor (or past "/"), then decide downwards, so each
    // directory costs one lookup however many entries share it.
    std::vector<std::string> chain{dir};
    const DirDecision* above = nullptr;
    for (std::string cur = dir;;) {
        auto parent = ipc::parent_path(cur);
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
    if (!ipc::is_normalized_absolute(dir)) return false;
    if (caller_.is_root()) return true;
    return decide(std::string(dir)).searchable;
}

bool VisibilityFilter::can_list(std::string_view dir) {
    if (!ipc::is_normalized_absolute(dir)) return false;
    if (caller_.is_root()) return true;
    return decide(std::string(dir)).listable;
}

bool VisibilityFilter::can_see(std::string_view path) {
    if (!ipc::is_normalized_absolute(path)) return false;
    auto parent = ipc::parent_path(path);
    if (!parent) return true;  // "/" itself
    if (caller_.is_root()) return true;
    return decide(std::string(*parent)).listable;
}

}  // namespace wsindex::daemon
