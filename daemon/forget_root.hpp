// Forgetting an indexed root: who asked, what the scan thread reports back, and the path test
// that decides which scans a forget cancels (docs/wsctl.md, "wsctl forget").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "ipc/result.hpp"
#include "storage/scan_writer.hpp"

namespace wsindex::daemon {

enum class ForgetOrigin {
    Client,    // wsctl forget
    Vanished,  // the change monitor saw the root deleted (logged at warn level)
};

struct ForgetOutcome {
    std::string root;
    storage::ForgetReport report;
    std::uint64_t cancelled = 0;  // scans of it (running or queued) cancelled first
};

// Called once with the outcome; on the scan thread, or on the caller's when refused at once.
using ForgetDone = std::function<void(ipc::Result<ForgetOutcome>)>;

// `path` is `root` or lies below it (both normalized: no trailing '/' except "/" itself).
inline bool path_at_or_below(std::string_view path, std::string_view root) {
    if (root == "/") return !path.empty() && path.front() == '/';
    return path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/');
}

}  // namespace wsindex::daemon
