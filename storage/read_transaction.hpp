// ReadTransaction: one read snapshot (BEGIN ... COMMIT) around several statements, so that a
// query sees one state of the index even while a scan's swap commits; ended on every path out.
#pragma once

#include "core/status.hpp"
#include "storage/database.hpp"

namespace wsindex::storage {

class ReadTransaction {
  public:
    explicit ReadTransaction(Database& db) : db_(db) {}
    ReadTransaction(const ReadTransaction&) = delete;
    ReadTransaction& operator=(const ReadTransaction&) = delete;
    ~ReadTransaction() {
        if (open_) (void)db_.exec("COMMIT");
    }
    core::Status begin() {
        core::Status s = db_.exec("BEGIN");
        open_ = s.is_ok();
        return s;
    }

  private:
    Database& db_;
    bool open_ = false;
};

}  // namespace wsindex::storage
