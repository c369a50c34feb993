// Checkpointer: a thread and a connection that run PASSIVE checkpoints while a scan writes.
#include "storage/checkpointer.hpp"

#include <sqlite3.h>

namespace wsindex::storage {

core::Status Checkpointer::start(const std::string& db_path, std::chrono::milliseconds period,
                                 std::unique_ptr<Checkpointer>* out) {
    std::unique_ptr<Checkpointer> c(new Checkpointer());
    if (auto s = Database::open(db_path, OpenMode::read_write, &c->db_); !s) return s;
    // This connection only checkpoints; it must not start automatic ones of its own.
    if (auto s = c->db_.exec("PRAGMA wal_autocheckpoint=0"); !s) return s;
    c->period_ = period;
    c->thread_ = std::thread([raw = c.get()] { raw->run(); });
    *out = std::move(c);
    return {};
}

Checkpointer::~Checkpointer() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

unsigned long Checkpointer::runs() const {
    std::lock_guard lock(mutex_);
    return runs_;
}

void Checkpointer::run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period_, [this] { return stop_; })) {
        lock.unlock();
        // PASSIVE: copies what no reader still needs and never waits for locks. Errors (a
        // full disk, a busy log) are the writer's to report: its own commits will fail.
        (void)sqlite3_wal_checkpoint_v2(db_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr,
                                        nullptr);
        lock.lock();
        ++runs_;
    }
}

}  // namespace wsindex::storage
