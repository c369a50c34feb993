// TotalsAdjuster: keeps the stored recursive totals of directories (and of all their ancestors)
// exact across a change made in place inside one transaction — the live index's way of updating
// `dirs` totals without walking what did not change.
//
// A directory's total is its additive ("single") part plus its multi-link part (each inode with
// several names counted once: storage/tree_totals.hpp). The single part moves by the sum of the
// changes below it; the multi-link part is not additive and is recounted from `links`:
//   total_after(A) = (total_before(A) - multi_before(A)) + sum of single deltas at or below A
//                    + multi_after(A)
// Use, in one transaction:
//   1. touch(dir) for every directory whose subtree will change, BEFORE any write (it reads the
//      directory's and its ancestors' totals and multi-link parts as they are now);
//   2. make the changes, calling add(dir, delta) for each change of a single part at `dir`
//      (applies to dir and every ancestor) and removed(dir) for each directory deleted;
//   3. finish() writes every touched directory's new total.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/status.hpp"
#include "storage/database.hpp"
#include "storage/statement.hpp"
#include "storage/tree_totals.hpp"

namespace wsindex::storage {

class TotalsAdjuster {
  public:
    explicit TotalsAdjuster(Database& db) : db_(db) {}

    // Step 1. Reads `dir` (a visible dirs row id) and its ancestors, once each.
    core::Status touch(std::int64_t dir);
    // The single part of a touched directory's total as it was at touch() (its own size and
    // everything below it, multi-link inodes aside): what removing the directory takes away.
    [[nodiscard]] Totals single_before(std::int64_t dir) const;

    // Step 2. `dir` must have been touched.
    void add(std::int64_t dir, const Totals& single_delta);
    void removed(std::int64_t dir);

    // Step 3.
    core::Status finish();

  private:
    struct Node {
        std::int64_t parent = 0;
        std::string prefix;
        Totals single;  // before, then plus the deltas
        bool gone = false;
    };
    core::Status multi_of(const std::string& prefix, Totals* out);
    core::Status prepare();

    Database& db_;
    bool prepared_ = false;
    bool links_before_ = false;  // `links` had a row when the first directory was touched
    Statement read_dir_;
    Statement multi_;
    Statement update_;
    std::unordered_map<std::int64_t, Node> nodes_;
};

}  // namespace wsindex::storage
