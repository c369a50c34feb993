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

unsigned long Checkpointer::flushes() const {
    std::lock_guard lock(mutex_);
    return flushes_;
}

// Flushes the pages this thread's checkpoints wrote into the database file. SQLite syncs the
// file only after a checkpoint that copied the whole log, which a scan's steady commits rarely
// allow: the pages of a 1M-entry scan (~80 MB) then wait for the checkpoint that follows it,
// on the writer's thread (an 80 ms fdatasync when wsbench-ingest closes its connection,
// `perf trace -e fdatasync`; 24 ms with this flush). Flushing here, a little at a time, leaves
// that last sync little to do. Extra syncs never weaken durability. Through SQLite's own handle
// (SQLITE_FCNTL_FILE_POINTER): opening and later closing a descriptor of our own would drop
// every POSIX lock this process holds on the file.
void Checkpointer::flush_database_file() {
    sqlite3_file* file = nullptr;
    if (sqlite3_file_control(db_.handle(), "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK ||
        file == nullptr || file->pMethods == nullptr) {
        return;
    }
    if (file->pMethods->xSync(file, SQLITE_SYNC_NORMAL) != SQLITE_OK) return;
    std::lock_guard lock(mutex_);
    ++flushes_;
}

void Checkpointer::run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period_, [this] { return stop_; })) {
        lock.unlock();
        // PASSIVE: copies what no reader still needs and never waits for locks. Errors (a
        // full disk, a busy log) are the writer's to report: its own commits will fail.
        int copied = 0;
        const int rc = sqlite3_wal_checkpoint_v2(db_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                                 nullptr, &copied);
        if (rc == SQLITE_OK && copied > 0 && copied != copied_) flush_database_file();
        copied_ = copied;
        lock.lock();
        ++runs_;
    }
}

}  // namespace wsindex::storage
