// Test helpers for the walker: temporary trees, find -print0, child processes, result encoding.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "core/walk_result.hpp"
#include "core/walker.hpp"

namespace wsindex::test {

// A fresh directory under /tmp (mode 0755, so an unprivileged child can walk it); removed with
// everything inside (permissions restored first) when destroyed.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

  private:
    std::string path_;
};

// Small file-system builders; each fails the current test (ADD_FAILURE) on error.
void make_dir(const std::string& path, mode_t mode = 0755);
void make_file(const std::string& path, const std::string& contents = {});
void make_symlink(const std::string& target, const std::string& path);

// Runs a shell command; true when it exits 0.
bool run_command(const std::string& command);

// The shared/ folder beside the repository (env WSINDEX_SHARED_DIR overrides), or "" if absent.
std::string shared_dir();
// Runs shared/bench/mktree.py OUT N SHAPE 1 [extra]; false (and a message) when it cannot.
bool make_tree(const std::string& out, int n, const std::string& shape,
               const std::string& extra = "--unreadable 0");

// Every path `find ROOT -print0` prints, sorted (byte order).
std::vector<std::string> find_paths(const std::string& root, const std::string& find_args = "");

struct Walked {
    core::Status status;
    std::vector<core::WalkResult> results;
    core::WalkStats stats;
    int consumer_calls = 0;
};
// Walks root with a fresh Walker and collects every result. With copy_results the consumer
// copies each result instead of moving it, leaving the path buffers for the walker to recycle.
Walked walk(const std::string& root, core::WalkOptions options = {}, bool copy_results = false);

// The sorted paths of `results`.
std::vector<std::string> paths_of(const std::vector<core::WalkResult>& results);

// Records of a names-only walk (WalkOptions::full_paths == false) with the full path of each
// file rebuilt from its directory's record, as the index does with directory ids.
std::vector<core::WalkResult> with_full_paths(std::vector<core::WalkResult> results);
// Finds the result for `path` (nullptr if absent).
const core::WalkResult* find_result(const std::vector<core::WalkResult>& results,
                                    const std::string& path);

// lstat that works past PATH_MAX (component by component, relative fds). nullopt on error.
std::optional<struct stat> lstat_any(const std::string& path);

// Encodes the fields tests compare across a pipe: path, type, error, has_stat, size, ino.
std::string encode(const std::vector<core::WalkResult>& results, const core::Status& status);
struct Decoded {
    int status_errno = 0;  // 0: ok
    std::vector<core::WalkResult> results;
};
Decoded decode(const std::string& bytes);

// Forks; the child runs `body` and writes its return value through a pipe, then _exit(0)s.
// Returns the bytes, or nullopt if the child crashed or exited non-zero (its exit is reported).
std::optional<std::string> run_in_child(const std::function<std::string()>& body);

// In a child: drops to uid/gid 65534 (nobody), no supplementary groups. False on failure.
bool drop_privileges();

}  // namespace wsindex::test
