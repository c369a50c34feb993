// ChangedDir: what the live monitor hands the scan thread — one directory to refresh.
#pragma once

#include <string>
#include <vector>

namespace wsindex::daemon {

// The names that changed in `path` (each stat'ed on its own), or — names empty — all of it
// (re-listed one level): the monitor names every entry an event reported, up to a bound.
struct ChangedDir {
    std::string path;
    std::vector<std::string> names;
    // Subdirectories to walk again even if indexed as the same directory
    // (storage::RelistedDir::rewalk): those a named re-listing replaced by this one named.
    std::vector<std::string> rewalk;
    // Names beyond a bound were dropped (monitor::DirChange::names_dropped): every
    // subdirectory whose identity or change time differs from its row is walked again
    // (storage::RelistedDir::rewalk_changed).
    bool names_dropped = false;
};

}  // namespace wsindex::daemon
