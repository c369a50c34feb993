// IndexWatch (index_watch.hpp): the query loop on its own read-only SQLite connection.
#include "tests/cli/support/index_watch.hpp"

#include <sqlite3.h>

#include <chrono>

namespace wsindex::cli::test {

IndexWatch::IndexWatch(std::string db, std::string sql)
    : db_(std::move(db)), sql_(std::move(sql)), thread_([this] { run(); }) {}

IndexWatch::~IndexWatch() { stop(); }

void IndexWatch::stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
}

std::string IndexWatch::first_rows() const {
    std::lock_guard lock(mutex_);
    return first_rows_;
}

std::string IndexWatch::error() const {
    std::lock_guard lock(mutex_);
    return error_;
}

void IndexWatch::run() {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(db_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        std::lock_guard lock(mutex_);
        error_ = "open " + db_ + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return;
    }
    sqlite3_busy_timeout(db, 1000);
    while (!stop_.load()) {
        std::string rows;
        char* err = nullptr;
        const int rc = sqlite3_exec(
            db, sql_.c_str(),
            [](void* out, int n, char** values, char**) {
                auto* s = static_cast<std::string*>(out);
                for (int i = 0; i < n; ++i)
                    *s += (i > 0 ? " " : "") + std::string(values[i] ? values[i] : "NULL");
                *s += "\n";
                return 0;
            },
            &rows, &err);
        queries_.fetch_add(1);
        if (rc != SQLITE_OK) {
            // A busy database is the daemon at work: the next query looks again.
            if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) {
                std::lock_guard lock(mutex_);
                if (error_.empty()) error_ = err != nullptr ? err : sqlite3_errstr(rc);
            }
            sqlite3_free(err);
            continue;
        }
        if (!rows.empty()) {
            hits_.fetch_add(1);
            std::lock_guard lock(mutex_);
            if (first_rows_.empty()) first_rows_ = rows;
        }
        // Gives the daemon's writer the CPU between looks.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    sqlite3_close(db);
}

}  // namespace wsindex::cli::test
