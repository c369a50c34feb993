// Test support for the daemon: temporary trees and databases, and a gate to hold a thread at a
// known point (so tests see a scan running or queued without sleeping).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>

namespace wsindex::daemon::test {

// A temporary directory, removed recursively at destruction.
class TempDir {
  public:
    TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir();
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string operator/(const std::string& name) const {
        return path_ + "/" + name;
    }

  private:
    std::string path_;
};

// Makes `dirs` directories under `root`, each holding `files_per_dir` files of `bytes` bytes.
// Returns the number of entries created (directories and files, root excluded).
std::size_t make_tree(const std::string& root, std::size_t dirs, std::size_t files_per_dir,
                      std::size_t bytes = 10);
void write_file(const std::string& path, std::size_t bytes);
// Writes `content` to `path` (created or truncated); a failure fails the test.
void write_file(const std::string& path, const std::string& content);

// A one-shot gate: threads that pass() block until open(); the test can wait until someone
// arrived. Timeouts only turn a hang into a failure.
class Gate {
  public:
    void pass() {
        std::unique_lock lock(mutex_);
        ++arrived_;
        cv_.notify_all();
        cv_.wait(lock, [&] { return open_; });
    }
    bool wait_arrived(std::size_t n = 1, std::chrono::seconds timeout = std::chrono::seconds(30)) {
        std::unique_lock lock(mutex_);
        return cv_.wait_for(lock, timeout, [&] { return arrived_ >= n; });
    }
    void open() {
        std::lock_guard lock(mutex_);
        open_ = true;
        cv_.notify_all();
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::size_t arrived_ = 0;
    bool open_ = false;
};

}  // namespace wsindex::daemon::test
