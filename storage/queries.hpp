// Queries: what the daemon asks the index — find by name with filters, biggest files and
// directories, directory totals to a depth. Runs on a reader connection owned by the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace wsindex::storage {

class Database;
class NameIndex;

enum class NameMatch {
    substring,  // the default, like plocate: the pattern anywhere in the name
    glob,       // SQLite GLOB over the whole name (* ? [...])
    regex,      // POSIX extended regex, unanchored
};

enum class Order { none, path, size_desc, mtime_desc };

struct FindQuery {
    std::string pattern;  // bytes; empty matches every name
    NameMatch match = NameMatch::substring;
    // ASCII case folding of the name and the pattern alike (so a glob's [A-Z] becomes [a-z]);
    // regex: REG_ICASE.
    bool ignore_case = false;
    std::string types;         // find %y letters to keep ("f", "fl"); empty keeps all
    std::optional<std::int64_t> min_size, max_size;          // bytes, inclusive
    std::optional<std::int64_t> min_mtime_ns, max_mtime_ns;  // inclusive
    std::optional<std::uint32_t> uid;
    std::string under;  // only entries strictly below this directory path; empty: everywhere
    Order order = Order::none;
    std::size_t limit = 1000;  // 0: no limit
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

class Queries {
public:
    // `index` may be null or stale: queries then scan the table.
    explicit Queries(Database& db, const NameIndex* index = nullptr) : db_(db), index_(index) {}

    // Entries matching `q`. A substring query uses the name index when it is current and the
    // candidate set is small enough; otherwise one SQL scan with the filters pushed down.
    // Runs in a read transaction of its own: not to be called inside the caller's transaction.
    core::Status find(const FindQuery& q, std::vector<FileRow>* out);
    // Largest regular files below `under` (everywhere when empty).
    core::Status biggest_files(std::string_view under, std::size_t limit,
                               std::vector<FileRow>* out);
    // Largest directories (by recursive apparent size) below `under`.
    core::Status biggest_dirs(std::string_view under, std::size_t limit,
                              std::vector<DirTotalsRow>* out);
    // Totals of `path` and of its descendants up to `depth` levels below it, in path order.
    core::Status dir_totals(std::string_view path, std::uint32_t depth,
                            std::vector<DirTotalsRow>* out);

    // Which path the last find() took, for tests and benchmarks.
    [[nodiscard]] bool last_used_index() const { return last_used_index_; }

private:
    core::Status find_with_sql(const FindQuery& q, std::vector<FileRow>* out);
    core::Status find_with_index(const FindQuery& q, std::vector<FileRow>* out, bool* done);

    Database& db_;
    const NameIndex* index_;
    bool last_used_index_ = false;
};

}  // namespace wsindex::storage
