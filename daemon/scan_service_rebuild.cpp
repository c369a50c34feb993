// ScanService, index damage: checking the file at open and on report, setting a damaged one
// aside, and queuing the rescans that build a new index in its place.
//
// Why here: the scan service owns the only writer connection and the queue of scans, which is
// all a rebuild needs. Readers (the query pool) keep reading the damaged file, which still
// answers what it can, until the rebuild's scans have ended; on_index_replaced then tells them
// to open the new one.
#include <spdlog/spdlog.h>

#include "core/clock.hpp"
#include "daemon/scan_service.hpp"
#include "ipc/bytes_codec.hpp"
#include "storage/clean_close.hpp"

namespace wsindex::daemon {
namespace {

// A root below another root of the list is scanned as part of it.
std::vector<std::string> top_level(std::vector<std::string> roots) {
    std::sort(roots.begin(), roots.end());
    std::vector<std::string> out;
    for (std::string& root : roots) {
        const bool below = !out.empty() && (out.back() == "/" || root == out.back() ||
                                            (root.size() > out.back().size() &&
                                             root.compare(0, out.back().size(), out.back()) == 0 &&
                                             root[out.back().size()] == '/'));
        if (!below) out.push_back(std::move(root));
    }
    return out;
}

}  // namespace

core::Status ScanService::open_writer() {
    const std::string& db = options_.db_path;
    storage::IndexCheck check;
    // A file closed cleanly and untouched since needs no check of every page (on a 100M-entry
    // index: minutes before the socket answers); damage found later is checked then.
    if (storage::take_clean_close_mark(db)) {
        spdlog::info("the index {} was closed cleanly and is unchanged since: not checked", db);
    } else if (auto st = storage::check_index_file(db, &check); !st) {
        return st;
    }
    if (check.damaged) {
        if (auto st = set_aside(check); !st) return st;
    }
    core::Status opened = storage::ScanIngest::open(db, options_.writer, &writer_);
    if (!opened && storage::is_damage(opened) && !check.damaged) {
        // quick_check passed, but the schema or the recovery at open met damage.
        writer_.reset();
        check.damaged = true;
        check.detail = opened.to_string();
        if (auto st = set_aside(check); !st) return st;
        opened = storage::ScanIngest::open(db, options_.writer, &writer_);
    }
    return opened;
}

core::Status ScanService::set_aside(const storage::IndexCheck& check) {
    IndexRebuild rebuild;
    rebuild.at_ns = core::wall_clock_ns();
    rebuild.detail = check.detail;
    rebuild.roots = top_level(check.roots);
    // Until queue_rebuild_locked() counts the scans it queued: status must not show a finished
    // rebuild while its writer is still being opened.
    rebuild.pending = rebuild.roots.size();
    if (auto st =
            storage::set_aside_damaged(options_.db_path, rebuild.at_ns, &rebuild.set_aside_as);
        !st) {
        spdlog::error("the index {} is damaged ({}) and cannot be set aside: {}", options_.db_path,
                      check.detail, st.to_string());
        return st;
    }
    spdlog::error(
        "the index {} is damaged ({}): set aside as {}; building a new index by scanning {} "
        "indexed roots again (and the configured ones)",
        options_.db_path, check.detail, rebuild.set_aside_as, rebuild.roots.size());
    std::lock_guard lock(mutex_);
    rebuild_ = std::move(rebuild);
    last_done_ns_.clear();  // nothing is indexed now: configured roots are due at once
    rebuild_due_locked();
    return {};
}

void ScanService::report_damage(const core::Status& failure) {
    if (!storage::is_damage(failure)) return;
    {
        std::lock_guard lock(mutex_);
        // While a rebuild's scans run, readers still read the file that was set aside: their
        // failures are about that one.
        if (damage_reported_ || stopping_ || (rebuild_ && rebuild_->pending > 0)) return;
        damage_reported_ = true;
    }
    spdlog::warn("index damage reported: {}; checking the file", failure.to_string());
    wake_.notify_all();
}

std::optional<IndexRebuild> ScanService::last_rebuild() const {
    std::lock_guard lock(mutex_);
    return rebuild_;
}

void ScanService::handle_reported_damage() {
    storage::IndexCheck check;
    if (auto st = storage::check_index_file(options_.db_path, &check); !st) {
        spdlog::error("checking the index after a damage report: {}", st.to_string());
        return;
    }
    if (!check.damaged) {
        spdlog::warn("the index {} passed quick_check after a damage report: kept as it is",
                     options_.db_path);
        return;
    }
    writer_.reset();  // closes the write connection; readers keep reading the old file
    if (auto st = set_aside(check); !st) {
        // Keep going on the damaged file rather than not at all; the next report retries.
        if (auto reopened = storage::ScanIngest::open(options_.db_path, options_.writer, &writer_);
            !reopened) {
            spdlog::critical("the index {} cannot be opened again: {}", options_.db_path,
                             reopened.to_string());
        }
        return;
    }
    if (auto st = storage::ScanIngest::open(options_.db_path, options_.writer, &writer_); !st) {
        spdlog::critical("a new index {} cannot be created: {}", options_.db_path, st.to_string());
        return;
    }
    std::vector<std::shared_ptr<ScanJob>> added;
    bool none = false;
    {
        std::lock_guard lock(mutex_);
        added = queue_rebuild_locked();
        none = rebuild_ && rebuild_->pending == 0;
    }
    for (const auto& job : added) {
        spdlog::info("scan queued: {} (rebuilding the index)", ipc::log_bytes(job->root()));
        notify(*job);
    }
    if (none && options_.on_index_replaced) options_.on_index_replaced();
}

std::vector<std::shared_ptr<ScanJob>> ScanService::queue_rebuild_locked() {
    std::vector<std::shared_ptr<ScanJob>> added;
    if (!rebuild_) return added;
    for (const std::string& root : rebuild_->roots) {
        bool is_new = false;
        std::shared_ptr<ScanJob> job = enqueue_locked(root, ScanOrigin::Rebuild, &is_new);
        if (!job) {
            spdlog::warn("rebuild scan of {} skipped: the scan queue is full",
                         ipc::log_bytes(root));
        } else if (is_new) {
            added.push_back(std::move(job));
        }
    }
    rebuild_->pending = added.size();
    return added;
}

bool ScanService::rebuild_job_ended_locked(const ScanJob& job) {
    if (job.origin() != ScanOrigin::Rebuild || !rebuild_ || rebuild_->pending == 0) return false;
    return --rebuild_->pending == 0;
}

}  // namespace wsindex::daemon
