// TreeTotals: per-directory recursive totals of one scan, accumulated in memory as rows stream by.
//
// Definitions (also in docs/schema.md): for a directory A, size and blocks sum A itself and every
// entry below it; files counts the non-directory entries below it; dirs counts the directories
// below it (not A). An inode with more than one link (by dev, ino) counts once per directory
// total however many of its names lie below that directory.
//
// Why totals are computed in three places, each for what only it can do:
//   1. Here, in memory during a scan: every directory of the scanned subtree, from the rows as
//      they stream by (no query; the dirs rows are written with their totals once).
//   2. In the swap (scan_swap.cpp, steps 1 and 4): the ancestors *above* a subtree rescan,
//      which the scan never walked. Their additive part is adjusted by the difference; their
//      multi-link part (an inode counted once per total) is not additive and is recounted
//      from the `links` table, so a hard link across the subtree's edge is counted once.
//      Then (step 5, storage/inode_sync.hpp) the other names of the hard-linked inodes the
//      scan rewrote, outside the subtree, get the fresh metadata (a name whose link count
//      rose moves from the additive part to `links`, and back when it fell), and the totals
//      of their directories and ancestors change by the same two parts.
//   3. storage/visible_totals: the same definitions restricted to what one caller may see,
//      recomputed from entries only when the caller may not list the whole subtree (the
//      stored totals would reveal the size of what is hidden).
// A change to the definitions changes all three; tests/storage/totals_test.cpp compares 1 and
// 2 with a fresh scan, and the visibility tests compare 3 with `du` run as the caller.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/walk_result.hpp"

namespace wsindex::storage {

struct Totals {
    std::int64_t size = 0;
    std::int64_t blocks = 0;  // 512-byte units
    std::int64_t files = 0;
    std::int64_t dirs = 0;

    Totals& operator+=(const Totals& o) {
        size += o.size;
        blocks += o.blocks;
        files += o.files;
        dirs += o.dirs;
        return *this;
    }
    Totals& operator-=(const Totals& o) {
        size -= o.size;
        blocks -= o.blocks;
        files -= o.files;
        dirs -= o.dirs;
        return *this;
    }
    friend bool operator==(const Totals&, const Totals&) = default;
};

// One name of a multi-link inode, kept apart because it must be counted once per ancestor.
struct LinkName {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t dir = 0;  // walk dir id of the directory holding the name
    std::int64_t size = 0;
    std::int64_t blocks = 0;
};

// Owned by the writer thread. Memory: 48 bytes per directory (32 more with multi-link names)
// plus 40 per multi-link name.
class TreeTotals {
  public:
    // Records one walk result (any order: children may arrive before their directory).
    void add(const core::WalkResult& r);
    // Computes the recursive totals; call once, after the last add().
    void finish();

    // After finish(): the recursive totals of walk dir `id` (zero for unknown ids).
    [[nodiscard]] Totals total(std::uint64_t id) const;
    // After finish(): the part of total(id) that excludes multi-link inodes (decomposable,
    // used to adjust the ancestors of a rescanned subtree).
    [[nodiscard]] Totals single(std::uint64_t id) const;
    [[nodiscard]] std::uint64_t max_dir_id() const { return size_ == 0 ? 0 : size_ - 1; }
    [[nodiscard]] bool known(std::uint64_t id) const { return id < size_ && dir(id).seen; }

  private:
    // What every directory needs while rows stream in: 48 bytes. The multi-link part of the
    // totals and finish()'s stamps live in separate arrays made only when there are links.
    struct Dir {
        std::uint64_t parent = 0;
        std::uint32_t depth = 0;
        bool seen = false;  // its own record arrived
        Totals single;      // own record + single-link children, then (after finish) recursive
    };
    // Directories live in fixed chunks that never move: a growing vector copied them at every
    // doubling and touched twice the final memory, and fresh pages are what cost here (~11 us
    // a 4 KiB page fault on the benchmark VM; this array was 5% of the writer's time).
    static constexpr std::size_t kChunkShift = 12;
    static constexpr std::size_t kChunk = std::size_t{1} << kChunkShift;
    Dir& at(std::uint64_t id);  // grows to hold id
    // id < size_ (its chunk exists).
    [[nodiscard]] Dir& dir(std::uint64_t id) {
        return chunks_[id >> kChunkShift][id & (kChunk - 1)];
    }
    [[nodiscard]] const Dir& dir(std::uint64_t id) const {
        return chunks_[id >> kChunkShift][id & (kChunk - 1)];
    }

    std::vector<std::unique_ptr<Dir[]>> chunks_;  // walk dir id -> Dir (ids are dense)
    std::uint64_t size_ = 0;                      // 1 + the highest id seen
    std::vector<LinkName> links_;
    std::vector<Totals> multi_;  // after finish(), only if links_: multi-link inodes per dir
};

}  // namespace wsindex::storage
