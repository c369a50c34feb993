// ScanWaiters: the shared progress timer and the final replies.
#include "daemon/scan_waiter.hpp"

#include <algorithm>

#include "daemon/scan_visibility.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/methods.hpp"

namespace wsindex::daemon {

nlohmann::json ScanWaiters::scans_reply(const Waiter& w) {
    ipc::ScanReply reply;
    for (std::size_t i = 0; i < w.jobs.size(); ++i) {
        reply.scans.push_back(w.jobs[i]->info());
        if (i < w.counts_visible.size() && !w.counts_visible[i]) hide_counts(&reply.scans.back());
    }
    return ipc::to_json(reply);
}

ScanWaiters::ScanWaiters(boost::asio::io_context& io, std::chrono::milliseconds interval)
    : timer_(io), interval_(interval) {}

void ScanWaiters::add(std::vector<std::shared_ptr<const ScanJob>> jobs,
                      std::vector<bool> counts_visible, ipc::Responder responder) {
    if (stopped_) {
        responder.fail(ipc::make_error(ipc::ErrorKind::ShuttingDown, "wsindexd is stopping"));
        return;
    }
    waiters_.push_back(Waiter{std::move(jobs), std::move(counts_visible), std::move(responder)});
    check_all(false);  // the scans may have ended already
    arm();
}

void ScanWaiters::poke() { check_all(false); }

void ScanWaiters::stop() {
    stopped_ = true;
    timer_.cancel();
    for (Waiter& w : waiters_) {
        w.responder.fail(ipc::make_error(ipc::ErrorKind::ShuttingDown, "wsindexd is stopping"));
    }
    waiters_.clear();
}

void ScanWaiters::check_all(bool tick) {
    for (auto it = waiters_.begin(); it != waiters_.end();) {
        Waiter& w = *it;
        const bool done = std::all_of(w.jobs.begin(), w.jobs.end(),
                                      [](const auto& job) { return job->finished(); });
        bool drop = !w.responder.is_open();
        if (!drop && done) {
            finish(w);
            drop = true;
        } else if (!drop && tick && w.responder.streaming()) {
            // WouldBlock (the caller is not reading) just skips this tick.
            const ipc::SendResult sent = w.responder.try_more(scans_reply(w));
            drop = sent != ipc::SendResult::Sent && sent != ipc::SendResult::WouldBlock;
        }
        it = drop ? waiters_.erase(it) : std::next(it);
    }
}

// docs/protocol.md: a waited scan that was cancelled ends the call with Cancelled, after a
// last progress reply (when streaming) that shows every scan's final state.
void ScanWaiters::finish(Waiter& w) {
    const auto cancelled = std::find_if(w.jobs.begin(), w.jobs.end(), [](const auto& job) {
        return job->state() == ipc::ScanState::Cancelled;
    });
    if (cancelled == w.jobs.end()) {
        w.responder.reply(scans_reply(w));
        return;
    }
    if (w.responder.streaming()) w.responder.try_more(scans_reply(w));
    const std::int64_t id = (*cancelled)->scan_id();
    w.responder.fail(
        ipc::make_error(ipc::ErrorKind::Cancelled,
                        "scan of " + ipc::display_bytes((*cancelled)->root()) + " was cancelled",
                        nlohmann::json{{"scan_id", id}}));
}

void ScanWaiters::arm() {
    if (armed_ || stopped_ || waiters_.empty()) return;
    armed_ = true;
    timer_.expires_after(interval_);
    timer_.async_wait([this](const boost::system::error_code& ec) {
        armed_ = false;
        if (ec || stopped_) return;
        check_all(true);
        arm();
    });
}

}  // namespace wsindex::daemon
