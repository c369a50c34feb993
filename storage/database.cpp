// Database: opening, configuring and closing a connection; exec and prepare helpers.
#include "storage/database.hpp"

#include <sqlite3.h>

#include <mutex>
#include <utility>

#include "storage/regexp.hpp"
#include "storage/schema.hpp"
#include "storage/sqlite_error.hpp"
#include "storage/wal_write_buffer.hpp"

namespace wsindex::storage {
namespace {

// How long a connection waits for a lock held by another connection before SQLITE_BUSY.
// Readers in WAL mode never wait for the writer; this covers checkpoints and recovery.
constexpr int kBusyTimeoutMs = 5000;

// Pragmas for every connection. synchronous=NORMAL in WAL mode: a commit survives a process
// crash, and at worst the last transactions are lost on power failure — never corruption.
constexpr const char* kConnectionPragmas =
    "PRAGMA synchronous=NORMAL;"
    "PRAGMA foreign_keys=OFF;"
    "PRAGMA temp_store=FILE;"
    // 16 MiB page cache: enough for the B-tree edges that batches append to.
    "PRAGMA cache_size=-16384;";

// Process-wide SQLite settings, before the library initializes (at the first open). Memory
// statistics off: they take a global mutex on every sqlite3_malloc and free (~5 per inserted
// row, 2.5% of the writer's instructions) and nothing here reads them. SQLITE_MISUSE (someone
// initialized SQLite first) leaves the defaults, which are only slower.
void configure_sqlite_once() {
    static std::once_flag once;
    std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        close();
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

Database::~Database() { close(); }

void Database::close() {
    // sqlite3_close_v2 defers the close until the last statement is finalized.
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = nullptr;
}

core::Status Database::open(const std::string& path, OpenMode mode, Database* out) {
    configure_sqlite_once();
    Database db;
    db.path_ = path;
    const int flags = (mode == OpenMode::read_only ? SQLITE_OPEN_READONLY
                                                   : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                      SQLITE_OPEN_NOMUTEX;
    // Connections that write go through the VFS that gathers the log's frame writes
    // (wal_write_buffer.hpp); readers never write the log.
    const char* vfs = mode == OpenMode::read_write ? wal_buffering_vfs() : nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db.db_, flags, vfs);
    if (rc != SQLITE_OK) {
        core::Status status = sqlite_status(db.db_, rc, "opening " + path);
        return status;
    }
    sqlite3_extended_result_codes(db.db_, 1);
    sqlite3_busy_timeout(db.db_, kBusyTimeoutMs);
    if (auto status = db.exec(kConnectionPragmas); !status) return status;
    if (auto status = register_regexp(db.db_); !status) return status;
    if (mode == OpenMode::read_write) {
        // WAL lets readers keep reading the previous index while a scan writes.
        if (auto status = db.exec("PRAGMA journal_mode=WAL;"
                                  // Bound the WAL file that big transactions leave behind.
                                  "PRAGMA journal_size_limit=67108864;");
            !status) {
            return status;
        }
        if (auto status = migrate_schema(db); !status) return status;
        if (auto status = ensure_query_indexes(db); !status) return status;
    } else {
        if (auto status = check_schema_version(db); !status) return status;
        // Readers map the file: a find's point lookups touch one leaf page each (19k pages for
        // a 19k-hit fragment on 1M entries), more than the page cache holds, and each miss was a
        // pread() copying 4 KiB. Nothing here ever shrinks the file (no VACUUM), which is what
        // could fault a mapping.
        if (auto status = db.exec("PRAGMA mmap_size=1073741824"); !status) return status;
    }
    *out = std::move(db);
    return {};
}

bool Database::autocommit() const { return sqlite3_get_autocommit(db_) != 0; }

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

std::int64_t Database::changes() const { return sqlite3_changes64(db_); }

void Database::release_memory() {
    if (db_ != nullptr) (void)sqlite3_db_release_memory(db_);
}

core::Status Database::exec(std::string_view sql) {
    std::string copy(sql);
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, copy.c_str(), nullptr, nullptr, &error);
    sqlite3_free(error);  // the same text is available from sqlite3_errmsg
    if (rc != SQLITE_OK) {
        std::string head = copy.substr(0, 80);
        return sqlite_status(db_, rc, "executing " + head);
    }
    return {};
}

core::Status Database::prepare(std::string_view sql, Statement* out) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
        return sqlite_status(db_, rc, "preparing " + std::string(sql.substr(0, 80)));
    }
    *out = Statement(db_, stmt);
    return {};
}

core::Status Database::query_int64(std::string_view sql, std::int64_t* out) {
    Statement stmt;
    if (auto status = prepare(sql, &stmt); !status) return status;
    bool row = false;
    if (auto status = stmt.step(&row); !status) return status;
    if (!row) return sqlite_status(nullptr, SQLITE_ERROR, "no row from " + std::string(sql));
    *out = stmt.column_int64(0);
    return {};
}

}  // namespace wsindex::storage
