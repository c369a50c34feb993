// SyntheticTree: a balanced tree of N entries as the walker would report it, made up rather than
// read — the records of a walk of a root that does not exist, for indexes too big to build on disk.
//
// Shape: the root and `levels` levels of directories that hold only directories (`fanout` each),
// then leaf directories of `files_per_dir` files; filled depth-first until N entries (the root
// included), so the last directories of each level may hold fewer. Names come from the seeded
// NameGenerator (bench/name_search), unique within a directory; metadata (inode numbers, sizes,
// times, modes) is plausible and a function of the seed and the entry's position.
//
// Records are produced in walk order (a directory's record, with its `children`, before its
// entries), files with their name only and directories with their full path, as a walk with
// WalkOptions::full_paths == false; memory is one batch plus one path per level.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/name_search/synthetic_names.hpp"
#include "core/status.hpp"
#include "core/walk_result.hpp"

namespace wsindex::bench {

struct TreeShape {
    unsigned levels = 0;  // directory levels below the root; the leaves are at depth levels
    std::uint64_t fanout = 0;
    std::uint64_t files_per_dir = 0;
    // full[d]: entries of a full subtree whose top directory is at depth d (itself included).
    std::vector<std::uint64_t> full;
};

// The shape for `entries` (at least 1) whose directory fan-out is closest to `files_per_dir`.
TreeShape choose_shape(std::uint64_t entries, std::uint64_t files_per_dir);

class SyntheticTree {
  public:
    // Receives each batch (its records may be moved from) and, for the plain-text list, every
    // entry's full path; a non-ok status stops the generation.
    using BatchSink = std::function<core::Status(std::span<core::WalkResult>)>;
    using PathSink = std::function<void(std::string_view)>;

    SyntheticTree(std::string root, std::uint64_t entries, std::uint64_t seed,
                  std::uint64_t files_per_dir);

    // Produces every record once, in batches of `batch_rows`; path_sink may be empty.
    core::Status generate(std::size_t batch_rows, const BatchSink& batch_sink,
                          const PathSink& path_sink);

    [[nodiscard]] const TreeShape& shape() const { return shape_; }
    [[nodiscard]] std::uint64_t entries() const { return entries_; }
    [[nodiscard]] std::uint64_t dirs() const { return dirs_; }

  private:
    // How many entries a directory at `depth` holds whose subtree (itself excluded) has `below`.
    [[nodiscard]] std::uint64_t children_of(unsigned depth, std::uint64_t below) const;
    core::Status emit_contents(std::uint64_t dir_id, unsigned depth, std::uint64_t below);
    // The record at batch_[used_] is complete: count it, hand the batch over when full.
    core::Status record_done();
    void fill_metadata(core::WalkResult& r, bool directory, std::uint64_t subdirs);
    void next_unique_name(std::vector<std::string>& siblings);

    std::string root_;
    std::uint64_t target_;
    std::uint64_t seed_;
    TreeShape shape_;
    NameGenerator names_;
    std::vector<std::string> dir_paths_;  // by depth: the path of the directory being filled
    std::vector<std::vector<std::string>> sibling_names_;  // by depth, for uniqueness
    std::vector<core::WalkResult> batch_;
    std::size_t batch_rows_ = 0;
    std::size_t used_ = 0;
    const BatchSink* batch_sink_ = nullptr;
    const PathSink* path_sink_ = nullptr;
    std::string full_path_;  // scratch for path_sink
    std::uint64_t entries_ = 0;
    std::uint64_t dirs_ = 0;
    std::uint64_t next_dir_id_ = 1;
};

}  // namespace wsindex::bench
