// Checkpointer: copies a scan's write-ahead log into the database file on a thread of its own,
// so the scan's writer never waits for a checkpoint.
//
// Why: with SQLite's automatic checkpoints (every 1000 WAL pages) the committing thread itself
// copies the pages and fsyncs the database, ~18 times per 1M-entry scan. That wait sits on the
// writer thread, the ingest's critical path: 0.5-0.8 s of a 2.2 s ingest replay (1M rows, same
// machine, same run). A PASSIVE checkpoint from a second connection runs beside the writer (the
// WAL's checkpoint lock is not its write lock). The log itself grows during a scan (it restarts
// only when a write transaction begins with everything copied; docs/schema.md) and is copied
// to its end by the daemon's checkpoint after the scan.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.hpp"
#include "storage/database.hpp"

namespace wsindex::storage {

class Checkpointer {
  public:
    // Opens a connection of its own to `db_path` (an existing database in WAL mode) and starts
    // a thread that runs a PASSIVE checkpoint every `period`.
    static core::Status start(const std::string& db_path, std::chrono::milliseconds period,
                              std::unique_ptr<Checkpointer>* out);
    Checkpointer(const Checkpointer&) = delete;
    Checkpointer& operator=(const Checkpointer&) = delete;
    // Stops the thread (a checkpoint in progress finishes first) and closes the connection.
    ~Checkpointer();

    // Checkpoints run so far (for tests and logs).
    [[nodiscard]] unsigned long runs() const;
    // Flushes of the database file after a checkpoint that copied frames (for tests).
    [[nodiscard]] unsigned long flushes() const;

  private:
    Checkpointer() = default;
    void run();
    void flush_database_file();

    Database db_;  // used by the thread only, until the destructor joins it
    std::chrono::milliseconds period_{};
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;          // guarded by mutex_
    unsigned long runs_ = 0;     // guarded by mutex_
    unsigned long flushes_ = 0;  // guarded by mutex_
    int copied_ = 0;             // frames copied by the last checkpoint (the thread's own)
    std::thread thread_;
};

}  // namespace wsindex::storage
