// Statement: prepared statement wrapper; binding, stepping and column access.
#include "storage/statement.hpp"

#include <sqlite3.h>

#include <utility>

#include "storage/sqlite_error.hpp"

namespace wsindex::storage {

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        db_ = std::exchange(other.db_, nullptr);
        stmt_ = std::exchange(other.stmt_, nullptr);
    }
    return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

// Bind errors (SQLITE_RANGE, SQLITE_NOMEM) are sticky in SQLite: the following step reports
// them, so the binders can be chained without checking each call.
Statement& Statement::bind_int64(int index, std::int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
}

Statement& Statement::bind_null(int index) {
    sqlite3_bind_null(stmt_, index);
    return *this;
}

Statement& Statement::bind_blob(int index, std::string_view bytes) {
    // A zero-length blob must not be NULL: pass a non-null pointer.
    sqlite3_bind_blob64(stmt_, index, bytes.empty() ? "" : bytes.data(), bytes.size(),
                        SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bind_blob_static(int index, std::string_view bytes) {
    sqlite3_bind_blob64(stmt_, index, bytes.empty() ? "" : bytes.data(), bytes.size(),
                        SQLITE_STATIC);
    return *this;
}

Statement& Statement::bind_text(int index, std::string_view text) {
    sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return *this;
}

core::Status Statement::step(bool* row) {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
        *row = true;
        return {};
    }
    *row = false;
    if (rc == SQLITE_DONE) return {};
    const char* sql = sqlite3_sql(stmt_);
    core::Status status =
        sqlite_status(db_, rc, "executing " + std::string(sql ? sql : "").substr(0, 80));
    sqlite3_reset(stmt_);
    return status;
}

core::Status Statement::run() {
    bool row = true;
    while (row) {
        core::Status status = step(&row);
        if (!status) return status;
    }
    reset();
    return {};
}

core::Status Statement::run_keep_bindings() {
    bool row = true;
    while (row) {
        core::Status status = step(&row);
        if (!status) return status;
    }
    sqlite3_reset(stmt_);
    return {};
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }

int Statement::parameter_count() const { return sqlite3_bind_parameter_count(stmt_); }

std::int64_t Statement::column_int64(int index) const { return sqlite3_column_int64(stmt_, index); }

bool Statement::column_is_null(int index) const {
    return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::string_view Statement::column_bytes(int index) const {
    // column_blob first, then column_bytes: the order SQLite documents to avoid a conversion.
    const void* data = sqlite3_column_blob(stmt_, index);
    const int size = sqlite3_column_bytes(stmt_, index);
    if (data == nullptr) return {};
    return {static_cast<const char*>(data), static_cast<std::size_t>(size)};
}

}  // namespace wsindex::storage
