// Statement: RAII over one prepared sqlite3_stmt, reused across executions (reset, rebind).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace wsindex::storage {

class Statement {
  public:
    Statement() = default;
    Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    [[nodiscard]] bool valid() const { return stmt_ != nullptr; }

    // Parameters are 1-based, as in SQLite. Blobs and texts are copied (SQLITE_TRANSIENT) unless
    // the _static variant is used, whose bytes must stay alive until the next reset().
    Statement& bind_int64(int index, std::int64_t value);
    Statement& bind_null(int index);
    Statement& bind_blob(int index, std::string_view bytes);
    Statement& bind_blob_static(int index, std::string_view bytes);
    Statement& bind_text(int index, std::string_view text);

    // One step. Returns ok and sets *row (true: a row is available, false: done), or an error
    // carrying SQLite's message. The statement is reset automatically by reset() / next bind.
    core::Status step(bool* row);
    // Steps to completion, discarding rows, then resets and clears the bindings.
    core::Status run();
    // Like run() but keeps the bindings: for hot loops that rebind every parameter anyway
    // (sqlite3_clear_bindings per row is measurable at a million rows).
    core::Status run_keep_bindings();
    void reset();

    [[nodiscard]] std::int64_t column_int64(int index) const;
    [[nodiscard]] bool column_is_null(int index) const;
    // The column's bytes, valid until the next step/reset (blob or text, byte-exact).
    [[nodiscard]] std::string_view column_bytes(int index) const;

    [[nodiscard]] int column_count() const;
    // The largest parameter index in the SQL text.
    [[nodiscard]] int parameter_count() const;
    [[nodiscard]] sqlite3_stmt* handle() const { return stmt_; }

  private:
    sqlite3* db_ = nullptr;         // not owned; the Database outlives its statements
    sqlite3_stmt* stmt_ = nullptr;  // owned
};

}  // namespace wsindex::storage
