// PathRecycler: returns the path buffers of consumed results to the workers, so a steady walk
// allocates no memory per entry.
//
// Why: WalkResult::path is a std::string (the contract with storage/), built by a worker and
// destroyed on the consumer's thread. glibc's per-thread cache (tcache) then never refills on
// the worker, and every path costs a locked _int_malloc plus a cross-thread free, a visible share
// of a walk's CPU. Handing the buffers back in whole batches costs
// one mutex per batch instead.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace wsindex::core {

class PathRecycler {
  public:
    // Buffers above this capacity are freed instead (the deep tree's 8 KB paths would make the
    // cache large); typical paths fit.
    static constexpr std::size_t kMaxCapacity = 256;
    // Batches kept at most: enough for every worker to find one, bounded memory (~KiB each).
    static constexpr std::size_t kMaxBatches = 8;

    // Any thread (the consumer's). Takes the buffers of `batch`, leaving its paths empty.
    template <class Results>
    void give(Results& batch) {
        std::vector<std::string> paths;
        paths.reserve(batch.size());
        for (auto& r : batch) {
            const std::size_t cap = r.path.capacity();
            if (cap > 15 && cap <= kMaxCapacity) paths.push_back(std::move(r.path));
        }
        if (paths.empty()) return;
        std::lock_guard lock(mutex_);
        if (batches_.size() < kMaxBatches) batches_.push_back(std::move(paths));
    }

    // Any thread (a worker). Replaces `out` (which should be empty) with a batch of buffers;
    // false when none is waiting.
    bool take(std::vector<std::string>& out) {
        std::lock_guard lock(mutex_);
        if (batches_.empty()) return false;
        out = std::move(batches_.back());
        batches_.pop_back();
        return true;
    }

    // Frees everything kept (between runs).
    void clear() {
        std::lock_guard lock(mutex_);
        batches_.clear();
    }

  private:
    std::mutex mutex_;
    std::vector<std::vector<std::string>> batches_;
};

}  // namespace wsindex::core
