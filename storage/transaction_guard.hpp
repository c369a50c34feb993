// TransactionGuard: an explicit SQLite transaction that rolls back unless committed.
#pragma once

#include "storage/database.hpp"

namespace wsindex::storage {

// Rolls back unless released: every early return inside a transaction leaves none open.
class TransactionGuard {
  public:
    explicit TransactionGuard(Database& db) : db_(db) {}
    TransactionGuard(const TransactionGuard&) = delete;
    TransactionGuard& operator=(const TransactionGuard&) = delete;
    ~TransactionGuard() {
        if (active_) (void)db_.exec("ROLLBACK");
    }
    core::Status begin(const char* sql = "BEGIN") {
        core::Status status = db_.exec(sql);
        active_ = status.is_ok();
        return status;
    }
    core::Status commit() {
        core::Status status = db_.exec("COMMIT");
        // A failed COMMIT (SQLITE_FULL) may leave the transaction open; the guard rolls back.
        active_ = !status.is_ok() && !db_.autocommit();
        return status;
    }

  private:
    Database& db_;
    bool active_ = false;
};

}  // namespace wsindex::storage
