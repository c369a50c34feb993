// Test support: a sequential stand-in for the parallel walker, temporary directories and
// databases, and full dumps of what the index shows (for before/after comparisons).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "core/walk_result.hpp"

namespace wsindex::storage {
class Database;
class ScanWriter;
class ScanIngest;
}  // namespace wsindex::storage

namespace wsindex::storage::test {

// Walks `root` like core's walker: one record per entry, directories numbered at discovery
// (1 = root), paths joined with '/', everything relative to directory fds (paths past
// PATH_MAX work), errors recorded in the entry. Records come in discovery order.
std::vector<core::WalkResult> walk_tree(const std::string& root);

// Reorders results deterministically, as interleaved parallel workers would deliver them:
// children may come before their directory, the root anywhere.
void shuffle_results(std::vector<core::WalkResult>* results, unsigned seed);

// Feeds `results` to `consume` in batches of `batch_rows`.
template <typename Consume>
core::Status feed(std::vector<core::WalkResult> results, std::size_t batch_rows,
                  Consume&& consume) {
    for (std::size_t i = 0; i < results.size(); i += batch_rows) {
        const std::size_t n = std::min(batch_rows, results.size() - i);
        core::Status s = consume(std::span<core::WalkResult>(results.data() + i, n));
        if (!s) return s;
    }
    return {};
}

// Full scans through a ScanWriter: begin, feed (shuffled), complete.
core::Status scan_with(ScanWriter& writer, const std::string& root, unsigned seed = 1);
// Opens a fresh writer on db_path and scans root.
core::Status scan_db(const std::string& db_path, const std::string& root, unsigned seed = 1);

// A temporary directory removed (recursively) at destruction.
class TempDir {
  public:
    TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir();
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string operator/(const std::string& name) const {
        return path_ + "/" + name;
    }

  private:
    std::string path_;
};

void remove_tree(const std::string& path);
void write_file(const std::string& path, std::size_t bytes);

// Every row of `files` (path bytes and metadata) and of `dir_totals`, sorted: equal dumps
// mean equal visible indexes.
std::string dump_files(Database& db);
std::string dump_totals(Database& db);
std::string dump_index(Database& db);
// PRAGMA integrity_check's first row ("ok" when healthy).
std::string integrity(Database& db);
// A read-only connection to db_path (asserts success).
Database open_reader(const std::string& db_path);
std::int64_t query_int(Database& db, const std::string& sql);
std::string query_text(Database& db, const std::string& sql);

}  // namespace wsindex::storage::test
