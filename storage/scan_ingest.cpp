// ScanIngest: the writer thread's loop, and the consumer/finish/abort hand-offs.
#include "storage/scan_ingest.hpp"

#include <iterator>

#include "storage/sqlite_error.hpp"

namespace wsindex::storage {

core::Status ScanIngest::open(const std::string& db_path, const ScanIngestOptions& options,
                              std::unique_ptr<ScanIngest>* out) {
    std::unique_ptr<ScanIngest> w(new ScanIngest());
    w->options_ = options;
    if (auto s = ScanWriter::open(db_path, &w->writer_); !s) return s;
    *out = std::move(w);
    return {};
}

ScanIngest::~ScanIngest() {
    if (running_) (void)abort(storage_status(StorageErrc::cancelled, "index writer closed"), true);
}

core::Status ScanIngest::begin(std::string_view root) {
    if (running_) return storage_status(StorageErrc::scan_in_progress, "a scan is running");
    if (auto s = writer_->begin(root, options_.scan); !s) return s;
    scan_id_ = writer_->scan_id();
    running_ = true;
    if (options_.threaded) {
        failed_.store(false, std::memory_order_relaxed);
        error_ = {};
        complete_ = false;
        cancelled_ = false;
        end_reason_ = {};
        queue_.emplace(options_.queue_rows);
        thread_ = std::thread([this] { run(); });
    }
    return {};
}

core::Status ScanIngest::consume(std::span<core::WalkResult> batch) {
    if (!running_) return storage_status(StorageErrc::no_scan, "consume without a scan");
    if (!options_.threaded) return writer_->write(batch);
    // acquire: pairs with the writer thread's release after it stored error_.
    if (failed_.load(std::memory_order_acquire)) {
        std::lock_guard lock(mutex_);
        return error_;
    }
    Batch owned(std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
    const std::size_t rows = owned.size();
    if (!queue_->push(std::move(owned), rows) || failed_.load(std::memory_order_acquire)) {
        std::lock_guard lock(mutex_);
        if (!error_.is_ok()) return error_;
        return storage_status(StorageErrc::writer_failed, "index writer stopped");
    }
    return {};
}

void ScanIngest::run() {
    Batch batch;
    bool failed = false;
    for (;;) {
        const auto got = queue_->pop(&batch, options_.scan.max_transaction_age);
        if (got == BoundedQueue<Batch>::PopResult::closed) break;
        if (failed) continue;  // drain: the consumer is told and the walk is stopping
        core::Status s = got == BoundedQueue<Batch>::PopResult::item ? writer_->write(batch)
                                                                     : writer_->flush_if_due();
        batch.clear();
        if (!s) {
            failed = true;
            {
                std::lock_guard lock(mutex_);
                error_ = s;
            }
            failed_.store(true, std::memory_order_release);
            queue_->clear();  // unblocks a consumer waiting for room
        }
    }
    bool complete = false;
    core::Status reason;
    bool cancelled = false;
    core::Status error;
    {
        std::lock_guard lock(mutex_);
        complete = complete_;
        reason = end_reason_;
        cancelled = cancelled_;
        error = error_;
    }
    if (!error.is_ok()) {
        (void)writer_->abort(error, false);
        result_ = error;
    } else if (complete) {
        result_ = writer_->complete();
        if (result_) result_ = writer_->collect_garbage();
    } else {
        core::Status recorded = writer_->abort(reason, cancelled);
        result_ = reason.is_ok() ? recorded : reason;
    }
}

core::Status ScanIngest::stop(bool complete, const core::Status& reason, bool cancelled) {
    if (!running_) return storage_status(StorageErrc::no_scan, "no scan is running");
    running_ = false;
    if (!options_.threaded) {
        if (complete) {
            core::Status s = writer_->complete();
            return s ? writer_->collect_garbage() : s;
        }
        core::Status recorded = writer_->abort(reason, cancelled);
        return reason.is_ok() ? recorded : reason;
    }
    {
        std::lock_guard lock(mutex_);
        complete_ = complete;
        end_reason_ = reason;
        cancelled_ = cancelled;
    }
    if (!complete) queue_->clear();  // nothing queued matters any more
    queue_->close();
    thread_.join();
    queue_.reset();
    return result_;
}

core::Status ScanIngest::finish() { return stop(true, {}, false); }

core::Status ScanIngest::abort(const core::Status& reason, bool cancelled) {
    return stop(false, reason, cancelled);
}

}  // namespace wsindex::storage
