// DirFd: a shared, counted directory descriptor; DirNode: what descendants need of a directory.
#pragma once

#include <fcntl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/fs_ops.hpp"

namespace wsindex::core {

// Owns one directory fd. Counts itself in `open_count` so the
// walker can keep the number of open directory fds under its budget. Shared by a directory's
// task, its stat chunks and its pending children; closes when the last of them lets go.
class DirFd {
  public:
    DirFd(int fd, const FsOps& fs, std::atomic<std::int64_t>* open_count)
        : fd_(fd), fs_(fs), open_count_(open_count) {
        // relaxed: a budget estimate, nothing is published through it.
        if (open_count_ != nullptr) open_count_->fetch_add(1, std::memory_order_relaxed);
    }
    DirFd(const DirFd&) = delete;
    DirFd& operator=(const DirFd&) = delete;
    ~DirFd() {
        if (open_count_ == nullptr) return;
        fs_.close_fd(fd_);
        open_count_->fetch_sub(1, std::memory_order_relaxed);
    }

    [[nodiscard]] int get() const { return fd_; }

  private:
    const int fd_;
    const FsOps& fs_;
    std::atomic<std::int64_t>* const open_count_;
};

// A directory being walked or with descendants still pending. Immutable once its children can
// see it (they are spawned after it is built; the pool's push/steal orders that).
struct DirNode {
    std::shared_ptr<const DirNode> parent;  // null for the root
    std::string path;                       // as reported; children append "/" + name
    std::uint32_t name_offset = 0;          // path.c_str() + name_offset: name, NUL-terminated
    std::uint64_t id = 0;
    std::uint32_t depth = 0;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t root_dev = 0;  // the device of the walk's root above it (one_file_system)
    std::weak_ptr<DirFd> fd;     // still open while someone holds it: a base for reopening

    [[nodiscard]] const char* name() const { return path.c_str() + name_offset; }
};

}  // namespace wsindex::core
