// Test support for the monitor: a private tmpfs, a recording sink, bounded polling.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "monitor/change_sink.hpp"

namespace wsindex::monitor::test {

// A tmpfs mounted in a private mount namespace of this (single-threaded) test process: only the
// test's own changes happen on it, so a file-system mark sees nothing else. Root only.
class PrivateTmpfs {
  public:
    PrivateTmpfs();
    PrivateTmpfs(const PrivateTmpfs&) = delete;
    PrivateTmpfs& operator=(const PrivateTmpfs&) = delete;
    ~PrivateTmpfs();
    // Empty when mounted, else why not.
    [[nodiscard]] const std::string& error() const { return error_; }
    [[nodiscard]] const std::string& path() const { return path_; }

  private:
    std::string base_;
    std::string path_;
    std::string error_;
    bool mounted_ = false;
};

class RecordingSink final : public ChangeSink {
  public:
    void dir_changed(const DirChange& change) override { dirs.push_back(change); }
    void root_event(const RootEvent& event) override { roots.push_back(event); }
    [[nodiscard]] bool has_key(DirKey key) const;
    [[nodiscard]] bool has_path(const std::string& path) const;
    [[nodiscard]] bool has_root_event(RootEventKind kind, const std::string& root) const;
    void clear() {
        dirs.clear();
        roots.clear();
    }
    std::vector<DirChange> dirs;
    std::vector<RootEvent> roots;
};

// Polls `fd` and runs `process` until `done` holds or `timeout` passes; false on timeout.
// `process` failing fails the wait too (its message in `error`).
bool wait_until(int fd, const std::function<core::Status()>& process,
                const std::function<bool()>& done, std::string& error,
                std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Sets a /proc/sys value and puts the old one back on destruction.
class SysctlOverride {
  public:
    SysctlOverride(std::string path, const std::string& value);
    SysctlOverride(const SysctlOverride&) = delete;
    SysctlOverride& operator=(const SysctlOverride&) = delete;
    ~SysctlOverride();
    [[nodiscard]] bool ok() const { return ok_; }

  private:
    std::string path_;
    std::string old_;
    bool ok_ = false;
};

// Whether a missing prerequisite must fail the test (CI=true) rather than skip it.
[[nodiscard]] bool in_ci();

// Small file helpers that report failure as a message (empty on success).
std::string write_file(const std::string& path, const std::string& data);

}  // namespace wsindex::monitor::test
