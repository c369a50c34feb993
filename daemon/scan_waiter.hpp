// ScanWaiters: the calls of wsindex.Scan with wait — progress replies while their scans run,
// the final reply when all of them ended. io thread only.
//
// One timer ticks every progress interval while anyone waits (not one per caller). A tick sends
// each streaming caller a progress reply with try_more(), which never blocks: a caller that does
// not read just misses ticks. poke() (after any job state change) sends final replies at once,
// so `wsctl scan --wait` returns as soon as the scan ends, not at the next tick. A cancelled
// scan ends the call with the Cancelled error (after a last progress reply when streaming). A
// caller that goes away stops being followed; its scans go on.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <list>
#include <memory>
#include <vector>

#include "daemon/scan_job.hpp"
#include "ipc/responder.hpp"

namespace wsindex::daemon {

class ScanWaiters {
  public:
    ScanWaiters(boost::asio::io_context& io, std::chrono::milliseconds interval);

    // io thread. Follows `jobs` for the call behind `responder`; the counters of jobs[i] are
    // withheld from every reply unless counts_visible[i] (decided by the caller's query
    // thread, daemon/scan_visibility.hpp; empty: all visible).
    void add(std::vector<std::shared_ptr<const ScanJob>> jobs, std::vector<bool> counts_visible,
             ipc::Responder responder);
    // io thread. Sends the final replies of callers whose scans all ended.
    void poke();
    // io thread. Stops the timer; callers still waiting get ShuttingDown.
    void stop();

    [[nodiscard]] std::size_t size() const { return waiters_.size(); }

  private:
    struct Waiter {
        std::vector<std::shared_ptr<const ScanJob>> jobs;
        std::vector<bool> counts_visible;
        ipc::Responder responder;
    };
    void check_all(bool tick);
    static nlohmann::json scans_reply(const Waiter& w);
    static void finish(Waiter& w);
    void arm();

    boost::asio::steady_timer timer_;
    std::chrono::milliseconds interval_;
    std::list<Waiter> waiters_;
    bool armed_ = false;
    bool stopped_ = false;
};

}  // namespace wsindex::daemon
