// NameIndex: every visible name of the index in one contiguous in-memory array, searched with
// memmem — substring queries in milliseconds without a per-row scan of SQLite.
//
// Why not FTS5 trigram (measured, docs/schema.md): building it costs ~5 s of CPU per 1M names,
// more than the whole ingest budget of a scan, and ~40-60 bytes per entry on disk. The array
// costs ~31 bytes per name in memory (name, separator, offset, directory, type, folded copy),
// loads in a fraction of a second from the database and answers in a few milliseconds.
// Immutable after load(): any number of threads may search one index.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace wsindex::storage {

class Database;

class NameIndex {
  public:
    // An entry's key in `entries`: (dir, name), with its directory's prefix (dirs.prefix: the
    // directory's path and '/'; empty for dir 0, whose names are whole root paths). The
    // prefix makes the path without a second lookup in `dirs` per match.
    struct Key {
        std::int64_t dir;
        std::string_view name;    // points into the index
        std::string_view prefix;  // points into the index
        char type;                // find's %y letter, '?' when unknown
    };

    // Loads the visible names of `db` in one read transaction, with its generation.
    static core::Status load(Database& db, NameIndex* out);

    // The index generation (meta.generation) the names were loaded from; a completed scan
    // increments it, so a different value in the database means this index is stale.
    [[nodiscard]] std::int64_t generation() const { return generation_; }
    [[nodiscard]] std::size_t size() const { return dir_of_.size(); }
    [[nodiscard]] std::size_t memory_bytes() const;

    // Calls on_match(key) for every name containing `needle` (ASCII case folded when
    // ignore_case), in index order, until it returns false. An empty needle matches all.
    template <typename F>
    void for_each_substring(std::string_view needle, bool ignore_case, F&& on_match) const;

  private:
    // Index of the name that contains byte offset `pos` of names_, knowing that it is name
    // `from` or a later one (starts_[from] <= pos).
    [[nodiscard]] std::size_t name_at(std::size_t pos, std::size_t from) const;
    [[nodiscard]] Key key(std::size_t i) const {
        const std::size_t begin = starts_[i];
        const std::size_t end = i + 1 < starts_.size() ? starts_[i + 1] - 1 : names_.size() - 1;
        const std::uint32_t d = dir_of_[i];
        const std::size_t prefix_end =
            d + 1 < dir_starts_.size() ? dir_starts_[d + 1] : dir_prefixes_.size();
        return {dir_ids_[d], std::string_view(names_).substr(begin, end - begin),
                std::string_view(dir_prefixes_).substr(dir_starts_[d], prefix_end - dir_starts_[d]),
                types_[i]};
    }
    std::size_t find(const std::string& haystack, std::string_view needle, std::size_t from) const;

    std::string names_;   // name '\0' name '\0' ...: a name never holds NUL, so no false hits
    std::string folded_;  // the same bytes with ASCII A-Z folded to a-z
    std::vector<std::uint64_t> starts_;      // byte offset of each name
    std::vector<std::uint32_t> dir_of_;      // each name's directory: an index into the next three
    std::string types_;                      // each name's type letter: a paths-only find
                                             // filters by type and answers without SQLite
    std::vector<std::int64_t> dir_ids_;      // the directories' ids, in load (id) order
    std::vector<std::uint64_t> dir_starts_;  // byte offset of each directory's prefix
    std::string dir_prefixes_;               // the prefixes, one after the other
    std::int64_t generation_ = -1;
};

template <typename F>
void NameIndex::for_each_substring(std::string_view needle, bool ignore_case, F&& on_match) const {
    if (needle.find('\0') != std::string_view::npos) return;
    std::string folded_needle(needle);
    if (ignore_case) {
        for (char& c : folded_needle) {
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
    }
    const std::string& haystack = ignore_case ? folded_ : names_;
    std::size_t pos = 0;
    std::size_t next = 0;  // hits come in order: the next one is in this name or a later one
    while (pos < haystack.size()) {
        const std::size_t hit = find(haystack, folded_needle, pos);
        if (hit == std::string::npos) return;
        const std::size_t i = name_at(hit, next);
        if (!on_match(key(i))) return;
        // Skip the rest of this name: one report per name.
        next = i + 1;
        pos = next < starts_.size() ? starts_[next] : haystack.size();
    }
}

}  // namespace wsindex::storage
