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
};

}  // namespace wsindex::daemon
