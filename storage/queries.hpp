// Queries: what the daemon asks the index — find by name with filters, biggest files and
// directories, directory totals to a depth. Runs on a reader connection owned by the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace wsindex::core {
class RangeExecutor;
}

namespace wsindex::storage {

class Database;
class NameIndex;

enum class NameMatch {
    substring,  // the default, like plocate: the pattern anywhere in the name
    glob,       // SQLite GLOB over the whole name (* ? [...]); over the whole path when the
                // pattern holds a '/' (like locate)
    regex,      // POSIX extended regex, unanchored, over the whole path (like locate and
                // find -regex; anchor with '/' to match a name: "/report[^/]*$")
};

enum class Order { none, path, size_desc, mtime_desc };

struct FindQuery {
    std::string pattern;  // bytes; empty matches every name
    NameMatch match = NameMatch::substring;
    // ASCII case folding of the name and the pattern alike (so a glob's [A-Z] becomes [a-z]);
    // regex: REG_ICASE.
    bool ignore_case = false;
    std::string types;  // find %y letters to keep ("f", "fl"); empty keeps all
    std::optional<std::int64_t> min_size, max_size;          // bytes, inclusive
    std::optional<std::int64_t> min_mtime_ns, max_mtime_ns;  // inclusive
    std::optional<std::uint32_t> uid;
    std::string under;  // only entries strictly below this directory path; empty: everywhere
    Order order = Order::none;
    std::size_t limit = 1000;  // 0: no limit
    // false: the caller needs each row's path, name and type only. A substring find without
    // size, time or owner filters, in no order or in path order, is then answered from the
    // name index alone, without reading `entries`; its rows have has_stat false and zero
    // metadata. (Any other find still reads every column.)
    bool metadata = true;
};

struct FileRow {
    std::string path;  // byte-exact
    std::string name;
    char type = '?';
    bool has_stat = false;  // false: the metadata below is unknown (stat failed)
    std::int64_t size = 0;
    std::int64_t blocks = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    std::uint32_t mode = 0;
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t nlink = 0;
    int error = 0;
};

struct DirTotalsRow {
    std::string path;
    std::uint32_t depth = 0;  // path components
    std::int64_t size = 0;
    std::int64_t blocks = 0;  // 512-byte units
    std::int64_t files = 0;
    std::int64_t dirs = 0;
};

// One row of the scans table (docs/schema.md). `state` as stored: running, complete, failed,
// cancelled, interrupted.
struct ScanRow {
    std::uint64_t id = 0;
    std::string root;  // bytes, as scanned
    std::string state;
    std::int64_t started_ns = 0;
    std::int64_t finished_ns = 0;  // 0 while running
    std::uint64_t entries = 0;
    std::uint64_t errors = 0;
    std::string error;  // empty unless the writer stored one
    // The root's recursive apparent size in the current index, for the newest completed scan of
    // each root (what that scan left, minus later scans of subtrees); nullopt for every other
    // scan (its rows were replaced, or it never completed) and for a root that is not a dir.
    std::optional<std::int64_t> root_size;
    // The directories of that tree, the root included (the count a scan reports); same rule.
    std::optional<std::int64_t> root_dirs;
};

// One recoverable walk error of a scan.
struct ErrorRow {
    std::string path;  // bytes
    int error = 0;     // errno
    std::string message;
};

// One indexed top-level root: its recursive totals and the scan that produced it.
struct RootRow {
    std::string path;  // bytes, without a trailing '/' (but "/" stays)
    std::uint64_t scan_id = 0;
    std::int64_t finished_ns = 0;  // of that scan; 0 if unknown
    std::uint64_t entries = 0;     // the root and everything below it
    std::int64_t size = 0;
};

class Queries {
  public:
    // `index` may be null or stale: queries then scan the table.
    explicit Queries(Database& db, const NameIndex* index = nullptr,
                     core::RangeExecutor* executor = nullptr)
        : db_(db), index_(index), executor_(executor) {}

    // Entries matching `q`. A substring query uses the name index when it is current and the
    // candidate set is small enough; otherwise one SQL scan with the filters pushed down.
    // Runs in a read transaction of its own: not to be called inside the caller's transaction.
    core::Status find(const FindQuery& q, std::vector<FileRow>* out);
    // The same, handing each row to `sink` as it is read (return false to stop early): memory
    // stays bounded whatever the number of matches (a name-index answer with an order is
    // buffered, at most the index's candidate threshold; an SQL answer with an order is sorted
    // by SQLite). The
    // read transaction stays open until the last row was handed over.
    using RowSink = std::function<bool(FileRow& row)>;
    core::Status find(const FindQuery& q, const RowSink& sink);
    // The entry at `path` (a file, a directory, anything); *found false when the index has no
    // entry there.
    core::Status entry(std::string_view path, FileRow* out, bool* found);
    // The entries directly in the directory `dir` (every type, subdirectories included), in
    // name order; none when `dir` is not an indexed directory.
    core::Status entries_in(std::string_view dir, std::vector<FileRow>* out);
    // Largest regular files below `under` (everywhere when empty).
    core::Status biggest_files(std::string_view under, std::size_t limit,
                               std::vector<FileRow>* out);
    // Largest directories (by recursive apparent size) strictly below `under`, at most
    // `max_depth` levels below it (0: any depth).
    core::Status biggest_dirs(std::string_view under, std::size_t limit,
                              std::vector<DirTotalsRow>* out, std::uint32_t max_depth = 0);
    // Totals of `path` and of its descendants up to `depth` levels below it, in path order.
    core::Status dir_totals(std::string_view path, std::uint32_t depth,
                            std::vector<DirTotalsRow>* out);

    // Scans, newest first; limit 0: all.
    core::Status scans(std::uint64_t limit, std::vector<ScanRow>* out);
    // One scan by id; *found false if there is none.
    core::Status scan(std::uint64_t scan_id, ScanRow* out, bool* found);
    // The id of the newest completed scan, 0 when there is none.
    core::Status latest_complete_scan(std::uint64_t* out);
    // The newest scan that ended failed, cancelled or interrupted; *found false if none.
    core::Status latest_unsuccessful_scan(ScanRow* out, bool* found);
    // scan_id: that scan's errors; nullopt: every error of the current index (rows of completed
    // scans that later rescans did not replace). In path order.
    core::Status errors(std::optional<std::uint64_t> scan_id, std::vector<ErrorRow>* out);
    // The indexed top-level roots, in path order.
    core::Status roots(std::vector<RootRow>* out);

    // Which path the last find() took, for tests and benchmarks.
    [[nodiscard]] bool last_used_index() const { return last_used_index_; }

  private:
    core::Status find_with_sql(const FindQuery& q, const RowSink& sink);
    core::Status find_with_index(const FindQuery& q, const RowSink& sink, bool* done);
    core::Status find_paths_in_index(const FindQuery& q, const RowSink& sink, bool* done);

    Database& db_;
    const NameIndex* index_;
    core::RangeExecutor* executor_;  // searches the name index in parallel when set
    bool last_used_index_ = false;
};

}  // namespace wsindex::storage
