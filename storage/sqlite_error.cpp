// Error categories for SQLite result codes and for storage's own failures.
#include "storage/sqlite_error.hpp"

#include <sqlite3.h>

#include <string>

namespace wsindex::storage {
namespace {

class SqliteCategory final : public std::error_category {
  public:
    const char* name() const noexcept override { return "sqlite"; }
    std::string message(int rc) const override { return sqlite3_errstr(rc); }
};

class StorageCategory final : public std::error_category {
  public:
    const char* name() const noexcept override { return "wsindex.storage"; }
    std::string message(int e) const override {
        switch (static_cast<StorageErrc>(e)) {
            case StorageErrc::schema_too_new:
                return "database schema is newer than this program";
            case StorageErrc::schema_corrupt:
                return "database schema is not a wsindex schema";
            case StorageErrc::bad_root:
                return "scan root is not a normalized absolute path";
            case StorageErrc::scan_in_progress:
                return "a scan is already in progress";
            case StorageErrc::no_scan:
                return "no scan in progress";
            case StorageErrc::cancelled:
                return "scan cancelled";
            case StorageErrc::injected_failure:
                return "injected write failure";
            case StorageErrc::writer_failed:
                return "index writer failed";
            case StorageErrc::not_indexed:
                return "not an indexed root";
        }
        return "unknown storage error";
    }
};

}  // namespace

const std::error_category& sqlite_category() {
    static const SqliteCategory category;
    return category;
}

const std::error_category& storage_category() {
    static const StorageCategory category;
    return category;
}

core::Status sqlite_status(sqlite3* db, int rc, std::string_view context) {
    int code = rc;
    std::string message(context);
    if (db != nullptr) {
        code = sqlite3_extended_errcode(db);
        if (code == SQLITE_OK) code = rc;
        message += ": ";
        message += sqlite3_errmsg(db);
    }
    return {make_sqlite_error_code(code), std::move(message)};
}

}  // namespace wsindex::storage
