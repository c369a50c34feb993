// NameIndex: one consistent generation of the visible names — an immutable base (NameFile: a
// mapped file next to the database, or an in-memory image) plus a small layer of directories that
// live updates changed since the base was built — searched with memmem, serially or in parallel
// on a RangeExecutor.
//
// Why not FTS5 trigram (measured, docs/schema.md): building it costs ~5 s of CPU per 1M names,
// more than the whole ingest budget of a scan, and ~40-60 bytes per entry on disk.
//
// Why a layer keyed by directory: a live batch re-lists whole directories, so "these directories'
// names are now these" is exactly what it knows. Each changed directory is re-read from the
// database by id (cheap), masks that directory in the base, and is searched in its place (the
// order stays: directories by id, names in byte order). The layer grows until the owner rebuilds
// the base (the shape of an LSM tree with one level).
//
// Trigram posting lists (NameTrigrams), when attached, answer needles of 3 bytes or more over the
// base: the same names in the same order as the scan, found by their lists instead of memmem.
//
// Immutable: a NameIndex value is a snapshot; with_dirs() makes a new one sharing the base, so a
// search that holds one sees one generation from its first name to its last.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "storage/name_file.hpp"
#include "storage/name_trigrams.hpp"

namespace wsindex::core {
class RangeExecutor;
}

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
    using MatchFn = std::function<bool(const Key&)>;

    // The names of `db` in memory (no file, no layer), with their generation.
    static core::Status load(Database& db, NameIndex* out);
    // The base from `path` if that file is valid, was built from this database file and holds
    // the database's current generation; otherwise built from the database and written there
    // (a write failure is logged by the caller through `write_error`: the index still serves
    // from memory). `rebuilt`: whether the file was (re)built.
    static core::Status open_or_build(Database& db, const std::string& path, NameIndex* out,
                                      bool* rebuilt, core::Status* write_error);
    // This snapshot with the names of directories `dirs` re-read from `db` (a directory that no
    // longer exists masks its base names and adds none). `*read_generation`: meta.generation of
    // the read; the new snapshot carries it.
    core::Status with_dirs(Database& db, const std::vector<std::int64_t>& dirs, NameIndex* out,
                           std::int64_t* read_generation) const;

    // This snapshot with `lists` answering its base's searches (built for this base: the caller
    // checks NameTrigrams::built_for). Snapshots made from it by with_dirs() keep them.
    [[nodiscard]] NameIndex with_trigrams(std::shared_ptr<const NameTrigrams> lists) const;
    [[nodiscard]] const std::shared_ptr<const NameFile>& base() const { return base_; }
    [[nodiscard]] bool has_trigrams() const { return trigrams_ != nullptr; }
    // Bytes of the trigram file (page cache), 0 without lists.
    [[nodiscard]] std::size_t trigram_bytes() const;

    // The index generation (meta.generation) the names are current for; a different value in
    // the database means this snapshot is stale. -1: never current (queries use SQL).
    [[nodiscard]] std::int64_t generation() const { return generation_; }
    void set_generation(std::int64_t g) { generation_ = g; }
    [[nodiscard]] std::size_t size() const;
    [[nodiscard]] std::size_t base_size() const { return base_ ? base_->size() : 0; }
    [[nodiscard]] std::size_t layer_names() const { return layer_ ? layer_->names : 0; }
    [[nodiscard]] std::size_t layer_dirs() const { return layer_ ? layer_->dirs.size() : 0; }
    [[nodiscard]] bool file_backed() const { return base_ && base_->mapped(); }
    // Anonymous memory the snapshot holds (the layer, the mask, an unmapped base image).
    [[nodiscard]] std::size_t memory_bytes() const;
    // Bytes of the base image (in the page cache when file-backed).
    [[nodiscard]] std::size_t base_bytes() const { return base_ ? base_->image_bytes() : 0; }

    // Calls on_match(key) for every name containing `needle` (ASCII case folded when
    // ignore_case), in index order (directories by id, names in byte order), until it returns
    // false. An empty needle matches all. With `executor`, the base is searched in windows on
    // its workers; matches still reach on_match in order, on the calling thread.
    void search(std::string_view needle, bool ignore_case, const MatchFn& on_match,
                core::RangeExecutor* executor = nullptr) const;
    template <typename F>
    void for_each_substring(std::string_view needle, bool ignore_case, F&& on_match,
                            core::RangeExecutor* executor = nullptr) const {
        search(needle, ignore_case, MatchFn(std::forward<F>(on_match)), executor);
    }

  private:
    struct LayerDir {
        std::string prefix;
        std::string names;  // name '\0' name '\0' ... in byte order
        std::string folded;
        std::vector<std::uint32_t> starts;
        std::string types;
    };
    struct Layer {
        std::map<std::int64_t, std::shared_ptr<const LayerDir>> dirs;  // by id; empty: removed
        std::vector<bool> masked;      // per base directory ordinal: its names are in `dirs`
        std::size_t names = 0;         // in `dirs`
        std::size_t masked_names = 0;  // base names hidden by `masked`
        std::size_t bytes = 0;         // of the LayerDirs
    };

    // The base's names [begin, end): through `lists` when given (serial: a selective needle
    // has few candidates), else memmem in windows; false once on_match returned false.
    bool search_base(std::size_t begin, std::size_t end, std::string_view needle, bool ignore_case,
                     const MatchFn& on_match, core::RangeExecutor* executor,
                     NameTrigrams::Candidates* lists) const;

    std::shared_ptr<const NameFile> base_;
    std::shared_ptr<const NameTrigrams> trigrams_;  // built for base_, or null
    std::shared_ptr<const Layer> layer_;
    std::int64_t generation_ = -1;
};

}  // namespace wsindex::storage
