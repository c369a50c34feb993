// ScanJob: state transitions and the ScanInfo snapshot.
#include "daemon/scan_job.hpp"

#include "core/clock.hpp"
#include "core/worker_pool.hpp"

namespace wsindex::daemon {

void ScanJob::mark_running() {
    std::lock_guard lock(mutex_);
    state_ = ipc::ScanState::Running;
    started_ns_ = core::wall_clock_ns();
    started_ = std::chrono::steady_clock::now();
}

void ScanJob::set_scan_id(std::int64_t id) {
    std::lock_guard lock(mutex_);
    scan_id_ = id;
}

void ScanJob::count(std::span<const core::WalkResult> batch) {
    std::uint64_t dirs = 0, errors = 0, bytes = 0;
    for (const core::WalkResult& r : batch) {
        dirs += r.is_dir() ? 1 : 0;
        errors += r.error != 0 ? 1 : 0;
        bytes += r.has_stat ? r.size : 0;
    }
    entries_.fetch_add(batch.size(), std::memory_order_relaxed);
    dirs_.fetch_add(dirs, std::memory_order_relaxed);
    errors_.fetch_add(errors, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
}

void ScanJob::finish(ipc::ScanState state, std::string error) {
    std::lock_guard lock(mutex_);
    if (state_ == ipc::ScanState::Running) elapsed_ = std::chrono::steady_clock::now() - started_;
    state_ = state;
    finished_ns_ = core::wall_clock_ns();
    error_ = std::move(error);
}

ipc::ScanInfo ScanJob::info() const {
    ipc::ScanInfo info;
    info.root = root_;
    info.entries = entries_.load(std::memory_order_relaxed);
    info.dirs = dirs_.load(std::memory_order_relaxed);
    info.errors = errors_.load(std::memory_order_relaxed);
    info.bytes = bytes_.load(std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    info.scan_id = static_cast<std::uint64_t>(scan_id_);
    info.state = state_;
    info.started_ns = started_ns_;
    info.finished_ns = finished_ns_;
    info.error = error_;
    std::chrono::steady_clock::duration elapsed{};
    if (state_ == ipc::ScanState::Running) {
        elapsed = std::chrono::steady_clock::now() - started_;
    } else if (started_ns_ != 0) {
        elapsed = elapsed_;
    }
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
    info.elapsed_ms = static_cast<std::uint64_t>(ms);
    const double seconds = std::chrono::duration<double>(elapsed).count();
    info.entries_per_second = seconds > 0 ? static_cast<double>(info.entries) / seconds : 0.0;
    return info;
}

namespace {

ScanJob::PoolStats read_pool(const core::Walker& walker) {
    ScanJob::PoolStats out;
    for (const core::PoolWorkerStats& w : walker.worker_stats()) {
        ipc::PoolWorkerStatus s;
        s.tasks = w.tasks_run;
        s.steal_attempts = w.steal_attempts;
        s.steals = w.steals;
        s.items_stolen = w.items_stolen;
        s.parked_ms = w.parked_ns / 1000000;
        out.workers.push_back(s);
    }
    out.ready_batches = walker.ready_batches();
    return out;
}

}  // namespace

void ScanJob::attach_walker(const core::Walker* walker) {
    std::lock_guard lock(walker_mutex_);
    walker_ = walker;
}

void ScanJob::detach_walker() {
    std::lock_guard lock(walker_mutex_);
    if (walker_ != nullptr) final_pool_ = read_pool(*walker_);
    walker_ = nullptr;
}

ScanJob::PoolStats ScanJob::pool_stats() const {
    std::lock_guard lock(walker_mutex_);
    return walker_ != nullptr ? read_pool(*walker_) : final_pool_;
}

bool ScanJob::finished() const {
    const ipc::ScanState s = state();
    return s != ipc::ScanState::Queued && s != ipc::ScanState::Running;
}

ipc::ScanState ScanJob::state() const {
    std::lock_guard lock(mutex_);
    return state_;
}

std::int64_t ScanJob::scan_id() const {
    std::lock_guard lock(mutex_);
    return scan_id_;
}

}  // namespace wsindex::daemon
