// BoundedQueue: a blocking FIFO bounded by a weight (rows), for one producer and one consumer.
//
// Backpressure: push() blocks while the queued weight is at the bound, so a slow writer slows
// the walk instead of growing memory. close() wakes everyone: push() then refuses, pop()
// drains what is left and then reports the end.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace wsindex::storage {

template <typename T>
class BoundedQueue {
  public:
    explicit BoundedQueue(std::size_t max_weight) : max_weight_(max_weight) {}

    // Blocks until there is room (an item heavier than the bound waits for an empty queue).
    // Returns false if the queue was closed.
    bool push(T item, std::size_t weight) {
        std::unique_lock lock(mutex_);
        not_full_.wait(lock,
                       [&] { return closed_ || weight_ == 0 || weight_ + weight <= max_weight_; });
        if (closed_) return false;
        weight_ += weight;
        items_.push_back({std::move(item), weight});
        not_empty_.notify_one();
        return true;
    }

    enum class PopResult { item, timeout, closed };
    // Waits up to `timeout` for an item.
    PopResult pop(T* out, std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        if (!not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); })) {
            return PopResult::timeout;
        }
        if (items_.empty()) return PopResult::closed;
        *out = std::move(items_.front().item);
        weight_ -= items_.front().weight;
        items_.pop_front();
        not_full_.notify_one();
        return PopResult::item;
    }

    void close() {
        std::lock_guard lock(mutex_);
        closed_ = true;
        not_empty_.notify_all();
        not_full_.notify_all();
    }

    // Drops every queued item (after a fatal error) and unblocks a waiting producer.
    void clear() {
        std::lock_guard lock(mutex_);
        items_.clear();
        weight_ = 0;
        not_full_.notify_all();
    }

  private:
    struct Slot {
        T item;
        std::size_t weight;
    };
    const std::size_t max_weight_;
    std::mutex mutex_;
    std::condition_variable not_empty_;
    std::condition_variable not_full_;
    std::deque<Slot> items_;  // guarded by mutex_
    std::size_t weight_ = 0;  // guarded by mutex_
    bool closed_ = false;     // guarded by mutex_
};

}  // namespace wsindex::storage
