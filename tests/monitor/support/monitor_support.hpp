// Test support for the monitor: a private tmpfs, a recording sink, bounded polling.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "monitor/change_sink.hpp"
#include "tests/support/prerequisite.hpp"
#include "tests/support/sysctl_override.hpp"

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

// Sets a /proc/sys value and puts the old one back on destruction (one at a time across the
// test processes).
using SysctlOverride = wsindex::test::SysctlOverride;

// Small file helpers that report failure as a message (empty on success).
std::string write_file(const std::string& path, const std::string& data);

// What the backend tests share: a private tmpfs holding `root_` (made by SetUp), a recording
// sink, the monitor under test, and a bounded wait for what it reports. Monitor: a backend with
// fd() and process_available().
template <class Monitor>
class MonitorTest : public ::testing::Test {
  protected:
    void SetUp() override {
        fs_ = std::make_unique<PrivateTmpfs>();
        if (!fs_->error().empty()) WSINDEX_SKIP_OR_FAIL_IN_CI() << fs_->error();
        root_ = fs_->path() + "/root";
        ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    }

    // Processes events until `done` holds; fails the test after the wait's deadline.
    void wait_for(const std::function<bool()>& done) {
        std::string error;
        const bool ok = wait_until(
            mon_->fd(), [this] { return mon_->process_available(); }, done, error);
        ASSERT_TRUE(ok) << error << " (" << sink_.dirs.size() << " dir changes, "
                        << sink_.roots.size() << " root events)";
    }

    std::unique_ptr<PrivateTmpfs> fs_;
    std::string root_;
    RecordingSink sink_;
    std::unique_ptr<Monitor> mon_;
};

}  // namespace wsindex::monitor::test
