// OwnerCounter: a statistics counter written by one thread only (its owner) and read by any.
#pragma once

#include <atomic>
#include <cstdint>

namespace wsindex::core {

// The owner updates with a relaxed load and store instead of an atomic read-modify-write (there
// is no other writer, so no update is lost, and a task pays no locked instruction); readers on
// other threads see some recent value. Nothing is published through it.
class OwnerCounter {
  public:
    // Owner only.
    void add(std::uint64_t n = 1) {
        v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
    // Owner only. Raises the value to n if it is lower (a high-water mark).
    void max(std::uint64_t n) {
        if (n > v_.load(std::memory_order_relaxed)) v_.store(n, std::memory_order_relaxed);
    }
    // Owner only, or while the owner is known to be idle.
    void reset() { v_.store(0, std::memory_order_relaxed); }
    // Any thread.
    [[nodiscard]] std::uint64_t get() const { return v_.load(std::memory_order_relaxed); }

  private:
    std::atomic<std::uint64_t> v_{0};
};

}  // namespace wsindex::core
