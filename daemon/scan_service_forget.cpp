// ScanService: forgetting an indexed root — the refusals, its scans cancelled, and the job the
// scan thread runs between scans (the writer is the scan thread's: one writer, no new lock).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "daemon/scan_service.hpp"
#include "ipc/bytes_codec.hpp"
#include "ipc/path_text.hpp"
#include "storage/path_range.hpp"
#include "storage/sqlite_error.hpp"

namespace wsindex::daemon {
namespace {

std::string shown(std::string_view path) { return ipc::log_bytes(path); }

nlohmann::json path_details(std::string_view path) {
    return nlohmann::json{{"path", ipc::encode_bytes(path)}};
}

ipc::Error configured_error(std::string_view root) {
    return ipc::make_error(ipc::ErrorKind::InvalidParameter,
                           shown(root) +
                               " is a configured root: remove it from the configuration and"
                               " reload wsindexd first (systemctl reload wsindexd), then forget it",
                           path_details(root));
}

}  // namespace

bool ScanService::configured_locked(std::string_view path) const {
    return std::any_of(due_.begin(), due_.end(), [&](const Due& d) {
        return d.canonical == path || ipc::lexically_normal(d.root.path) == path;
    });
}

bool ScanService::is_configured_root(std::string_view path) const {
    std::lock_guard lock(mutex_);
    return configured_locked(path);
}

void ScanService::forget(std::string root, ForgetOrigin origin, ForgetDone done) {
    auto refuse = [&](ipc::Error error) {
        if (origin == ForgetOrigin::Vanished) {
            spdlog::warn("indexed root {} was deleted, but it stays in the index: {}", shown(root),
                         error.message);
        }
        if (done) done(std::move(error));
    };
    if (!storage::is_normalized_root(root)) {
        refuse(ipc::invalid_parameter("root", "must be a normalized absolute path"));
        return;
    }
    std::vector<std::shared_ptr<ScanJob>> dropped;
    std::uint64_t cancelled = 0;
    bool replaced = false;              // a dropped job was the last of a rebuild
    std::optional<ipc::Error> refused;  // answered once the lock is released
    {
        std::lock_guard lock(mutex_);
        if (stopping_) {
            refused = ipc::make_error(ipc::ErrorKind::ShuttingDown, "wsindexd is stopping");
        } else if (configured_locked(root)) {
            // An unmounted or deleted configured root is not forgotten: the configuration says
            // to index it, and its periodic scan would bring it back.
            refused = configured_error(root);
        } else {
            // A scan of it would only be thrown away: cancel it rather than wait for it.
            if (running_ && path_at_or_below(running_->root(), root)) {
                running_->cancel_token().cancel();
                ++cancelled;
            }
            for (auto it = queue_.begin(); it != queue_.end();) {
                if (path_at_or_below((*it)->root(), root)) {
                    dropped.push_back(*it);
                    it = queue_.erase(it);
                } else {
                    ++it;
                }
            }
            for (const auto& job : dropped) {
                replaced = rebuild_job_ended_locked(*job) || replaced;
            }
            cancelled += dropped.size();
            tasks_.push_back([this, root, origin, cancelled, done = std::move(done)](bool run) {
                if (run) {
                    run_forget(root, origin, cancelled, done);
                } else if (done) {
                    done(ipc::make_error(ipc::ErrorKind::ShuttingDown, "wsindexd is stopping"));
                }
            });
            ++tasks_pending_;
        }
    }
    if (refused) {
        refuse(std::move(*refused));
        return;
    }
    wake_.notify_all();
    if (replaced && options_.on_index_replaced) options_.on_index_replaced();
    for (const auto& job : dropped) {
        job->finish(ipc::ScanState::Cancelled, "cancelled: its root is being forgotten");
        notify(*job);
    }
    spdlog::info("forget queued: {}{}", shown(root),
                 cancelled == 0 ? "" : " (" + std::to_string(cancelled) + " scans cancelled)");
}

void ScanService::run_forget(const std::string& root, ForgetOrigin origin, std::uint64_t cancelled,
                             const ForgetDone& done) {
    auto answer = [&](ipc::Result<ForgetOutcome> result) {
        if (done) done(std::move(result));
    };
    {
        std::lock_guard lock(mutex_);
        if (configured_locked(root)) {  // configured since it was requested
            answer(configured_error(root));
            return;
        }
    }
    ForgetOutcome outcome{root, {}, cancelled};
    const core::Status st = writer_->writer().forget(root, &outcome.report);
    if (!st) {
        if (st.code() == storage::make_error_code(storage::StorageErrc::not_indexed)) {
            if (origin == ForgetOrigin::Vanished) {
                spdlog::warn("indexed root {} was deleted; not forgotten: {}", shown(root),
                             st.message());
            }
            answer(ipc::make_error(ipc::ErrorKind::NotIndexed, st.message(), path_details(root)));
            return;
        }
        spdlog::error("forgetting {} failed: {}", shown(root), st.to_string());
        report_damage(st);
        answer(ipc::make_error(ipc::ErrorKind::Internal,
                               "forgetting " + shown(root) + " failed: " + st.to_string(),
                               path_details(root)));
        return;
    }
    {
        // Its history goes too: the schedule forgets when it was last indexed, and the scans
        // this process ended no longer stand for it in status.
        std::lock_guard lock(mutex_);
        std::erase_if(last_done_ns_,
                      [&](const auto& done_at) { return path_at_or_below(done_at.first, root); });
        std::erase_if(ended_, [&](const auto& job) { return path_at_or_below(job->root(), root); });
    }
    const storage::ForgetReport& r = outcome.report;
    if (origin == ForgetOrigin::Vanished) {
        spdlog::warn("indexed root {} was deleted: forgotten ({} entries, {} directories)",
                     shown(root), r.entries, r.dirs);
    } else {
        spdlog::info("root forgotten: {} ({} entries, {} directories, {} scans of history)",
                     shown(root), r.entries, r.dirs, r.scans);
    }
    if (!r.garbage_collected) {
        spdlog::warn("forgetting {}: its rows are left for the next garbage collection",
                     shown(root));
    }
    answer(std::move(outcome));
    settle();  // checkpoint, then readers reload (the generation moved)
}

}  // namespace wsindex::daemon
