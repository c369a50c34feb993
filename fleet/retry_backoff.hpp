// RetryBackoff: when the fleet publisher tries again after a failed publish. The wait doubles
// from `first` up to `longest` while attempts fail, so a server that stays down costs few
// connection attempts. A change on the host during the wait (the publisher's notify) brings
// the attempt forward to `first` after the failure: the server may be back and there is
// something new to publish, and waiting out a long backoff would leave the fleet copy behind
// for up to `longest` after the server returned. Success starts the doubling over.
// Plain logic over given time points (the caller holds the lock and reads the clock).
#pragma once

#include <algorithm>
#include <chrono>

namespace wsindex::fleet {

class RetryBackoff {
  public:
    using Clock = std::chrono::steady_clock;

    RetryBackoff(Clock::duration first, Clock::duration longest)
        : first_(first), longest_(longest), next_wait_(first) {}

    // An attempt failed at `now`: the next one is due after the current wait, which doubles.
    void failed(Clock::time_point now) {
        failed_at_ = now;
        due_ = now + next_wait_;
        next_wait_ = std::min(next_wait_ * 2, longest_);
    }
    // Something new to publish: due no later than `first` after the last failure.
    void changed() { due_ = std::min(due_, failed_at_ + first_); }
    void succeeded() { next_wait_ = first_; }

    // When the next attempt is due (after a failure).
    [[nodiscard]] Clock::time_point due() const { return due_; }

  private:
    Clock::duration first_;
    Clock::duration longest_;
    Clock::duration next_wait_;
    Clock::time_point failed_at_{};
    Clock::time_point due_{};
};

}  // namespace wsindex::fleet
