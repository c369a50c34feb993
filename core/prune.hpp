// PruneRules: which directories a walk records but does not descend into (updatedb's vocabulary).
//
// - paths (PRUNEPATHS): matched against the directory's path as the walk reports it (rooted at
//   the scan root as given), with fnmatch(FNM_PATHNAME) globs: "/tmp", "/var/spool/*".
// - names (PRUNENAMES): matched against the directory's own name: ".git", "*.cache".
// - fs_types (PRUNEFS): matched against the file-system type of a directory that starts a new
//   file system (fs_type_name of statfs's f_type), case-insensitive: "proc", "NFS", "fuse*".
//   A FUSE subtype cannot be seen in f_type: a rule "fuse.sshfs" prunes every FUSE mount.
// A pruned directory is itself recorded (with its metadata); only its contents are skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wsindex::core {

struct PruneRules {
    std::vector<std::string> paths;
    std::vector<std::string> names;
    std::vector<std::string> fs_types;

    [[nodiscard]] bool empty() const { return paths.empty() && names.empty() && fs_types.empty(); }
};

// PruneRules prepared for matching: literal patterns compare as strings, only globs call fnmatch.
// Immutable after construction; any thread may call the matchers.
class PruneMatcher {
  public:
    PruneMatcher() = default;
    explicit PruneMatcher(const PruneRules& rules);

    [[nodiscard]] bool has_dir_rules() const { return !paths_.empty() || !names_.empty(); }
    [[nodiscard]] bool has_fs_rules() const { return !fs_types_.empty(); }

    // `path` must be NUL-terminated at path.size() (a std::string's view is).
    [[nodiscard]] bool prune_dir(std::string_view path, std::string_view name) const;
    [[nodiscard]] bool prune_fs(std::string_view fs_type) const;

  private:
    struct Pattern {
        std::string text;
        bool glob = false;  // contains *, ? or [
    };
    std::vector<Pattern> paths_;
    std::vector<Pattern> names_;
    std::vector<Pattern> fs_types_;  // lower-cased
};

}  // namespace wsindex::core
