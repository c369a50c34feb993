// EventCount: lets idle workers sleep on a condition without polling and without lost wake-ups.
//
// The protocol (Eigen's EventCount, Taskflow's notifier), on C++20 atomic wait/notify, which is a
// futex on Linux for a 32-bit atomic:
//
//   waiter                                   notifier
//   1. key = prepare_wait()                  a. make the condition true (e.g. push an item)
//   2. re-check the condition;               b. notify_one() / notify_all()
//      if true: cancel_wait(), go on
//   3. commit_wait(key): sleep until the epoch moves past key
//
// Why no wake-up is lost: prepare_wait registers the waiter with a seq_cst RMW followed by a
// seq_cst fence before the re-check (2); notify issues a seq_cst fence after making the condition
// true (a) and before reading the waiter count. By the store-buffering argument, either the
// waiter's re-check sees the condition, or the notifier sees the registered waiter and bumps the
// epoch, and then commit_wait either sees the new epoch or is woken by the futex (which compares
// atomically).
#pragma once

#include <atomic>
#include <cstdint>

namespace wsindex::core {

class EventCount {
  public:
    using Key = std::uint32_t;

    // Waiter, step 1. Registers the calling thread as a (prospective) waiter.
    Key prepare_wait() {
        waiters_.fetch_add(1, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);  // order before the re-check (2)
        return epoch_.load(std::memory_order_seq_cst);
    }

    // Waiter, step 2 found work: unregister without sleeping.
    void cancel_wait() { waiters_.fetch_sub(1, std::memory_order_seq_cst); }

    // Waiter, step 3: sleeps until a notify after prepare_wait(). Spurious returns are harmless
    // (the caller re-checks its condition anyway) but the loop avoids most of them.
    void commit_wait(Key key) {
        while (epoch_.load(std::memory_order_acquire) == key) {
            epoch_.wait(key, std::memory_order_acquire);
        }
        waiters_.fetch_sub(1, std::memory_order_seq_cst);
    }

    // Notifier: wakes one registered waiter, if there is any. Any thread.
    void notify_one() {
        std::atomic_thread_fence(std::memory_order_seq_cst);  // order after step (a)
        if (waiters_.load(std::memory_order_relaxed) == 0) return;
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        epoch_.notify_one();
    }

    // Notifier: wakes every registered waiter. Any thread.
    void notify_all() {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (waiters_.load(std::memory_order_relaxed) == 0) return;
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        epoch_.notify_all();
    }

    // Any thread; an estimate, for "wake a sleeper only if there is one".
    [[nodiscard]] std::uint32_t waiters() const { return waiters_.load(std::memory_order_relaxed); }

  private:
    std::atomic<std::uint32_t> epoch_{0};
    std::atomic<std::uint32_t> waiters_{0};
    static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
};

}  // namespace wsindex::core
