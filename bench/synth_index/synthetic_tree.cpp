// SyntheticTree: the shape's arithmetic, the depth-first fill and the made-up metadata.
#include "bench/synth_index/synthetic_tree.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace wsindex::bench {
namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_mul_add(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    if (a != 0 && b > (kSaturated - c) / a) return kSaturated;
    return a * b + c;
}

// full[d] for a tree of `levels` directory levels: a leaf directory holds files_per_dir files,
// every other one `fanout` directories.
std::vector<std::uint64_t> full_sizes(unsigned levels, std::uint64_t fanout,
                                      std::uint64_t files_per_dir) {
    std::vector<std::uint64_t> full(levels + 1);
    full[levels] = 1 + files_per_dir;
    for (unsigned d = levels; d-- > 0;) full[d] = saturating_mul_add(fanout, full[d + 1], 1);
    return full;
}

// splitmix64's finalizer: the metadata of entry i is a function of (seed, i) alone.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

constexpr std::uint64_t kDevice = (253u << 8) | 1u;  // what a dm-1 volume reports as st_dev
constexpr std::int64_t kNsPerSecond = 1'000'000'000;
constexpr std::int64_t kEpochStart = 1'600'000'000;  // September 2020
constexpr std::uint64_t kTimeSpan = 5ull * 365 * 24 * 3600;

}  // namespace

TreeShape choose_shape(std::uint64_t entries, std::uint64_t files_per_dir) {
    TreeShape best;
    best.files_per_dir = files_per_dir;
    best.full = full_sizes(0, 0, files_per_dir);
    if (entries <= best.full[0]) return best;
    std::uint64_t best_distance = kSaturated;
    for (unsigned levels = 1; levels <= 32; ++levels) {
        // The smallest fan-out whose full tree holds `entries` (full sizes grow with it).
        std::uint64_t lo = 2;
        std::uint64_t hi = entries;
        while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            if (full_sizes(levels, mid, files_per_dir)[0] >= entries) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        const std::uint64_t distance = lo > files_per_dir ? lo - files_per_dir : files_per_dir - lo;
        if (distance < best_distance) {
            best_distance = distance;
            best.levels = levels;
            best.fanout = lo;
            best.full = full_sizes(levels, lo, files_per_dir);
        }
        if (lo == 2) break;  // more levels only make the fan-out smaller
    }
    return best;
}

SyntheticTree::SyntheticTree(std::string root, std::uint64_t entries, std::uint64_t seed,
                             std::uint64_t files_per_dir)
    : root_(std::move(root)),
      target_(std::max<std::uint64_t>(entries, 1)),
      seed_(seed),
      shape_(choose_shape(target_, files_per_dir)),
      names_(seed),
      dir_paths_(shape_.levels + 2),
      sibling_names_(shape_.levels + 1) {}

std::uint64_t SyntheticTree::children_of(unsigned depth, std::uint64_t below) const {
    if (depth == shape_.levels) return below;
    const std::uint64_t child = shape_.full[depth + 1];
    return (below + child - 1) / child;
}

core::Status SyntheticTree::generate(std::size_t batch_rows, const BatchSink& batch_sink,
                                     const PathSink& path_sink) {
    batch_.assign(std::max<std::size_t>(batch_rows, 1), core::WalkResult{});
    used_ = 0;
    entries_ = 0;
    dirs_ = 0;
    next_dir_id_ = 1;
    names_ = NameGenerator(seed_);
    batch_sink_ = &batch_sink;
    path_sink_ = path_sink ? &path_sink : nullptr;

    const std::uint64_t below = target_ - 1;
    const std::uint64_t children = children_of(0, below);
    core::WalkResult& r = batch_[used_];
    r.path.assign(root_);
    r.name_offset = 0;
    r.dir_id = next_dir_id_++;
    r.parent_id = 0;
    r.depth = 0;
    r.children = static_cast<std::uint32_t>(children);
    fill_metadata(r, true, shape_.levels > 0 ? children : 0);
    if (path_sink_ != nullptr) (*path_sink_)(root_);
    dir_paths_[0] = root_;
    if (auto s = record_done(); !s) return s;
    if (auto s = emit_contents(1, 0, below); !s) return s;
    if (used_ > 0) {
        if (auto s = (*batch_sink_)(std::span(batch_.data(), used_)); !s) return s;
        used_ = 0;
    }
    return {};
}

core::Status SyntheticTree::emit_contents(std::uint64_t dir_id, unsigned depth,
                                          std::uint64_t below) {
    const std::uint64_t n = children_of(depth, below);
    std::vector<std::string>& siblings = sibling_names_[depth];
    siblings.clear();
    const bool leaf = depth == shape_.levels;
    std::uint64_t remaining = below;
    for (std::uint64_t i = 0; i < n; ++i) {
        next_unique_name(siblings);
        const std::string& name = siblings.back();
        const std::string& parent_path = dir_paths_[depth];
        core::WalkResult& r = batch_[used_];
        r.parent_id = dir_id;
        r.depth = depth + 1;
        if (leaf) {
            r.path.assign(name);  // a file's record holds its name only (full_paths == false)
            r.name_offset = 0;
            r.dir_id = 0;
            r.children = 0;
            fill_metadata(r, false, 0);
            if (path_sink_ != nullptr) {
                full_path_.assign(parent_path).append(1, '/').append(name);
                (*path_sink_)(full_path_);
            }
            if (auto s = record_done(); !s) return s;
            continue;
        }
        const std::uint64_t subtree = std::min(shape_.full[depth + 1], remaining);
        remaining -= subtree;
        const std::uint64_t child_below = subtree - 1;
        const std::uint64_t child_children = children_of(depth + 1, child_below);
        const std::uint64_t child_id = next_dir_id_++;
        std::string& child_path = dir_paths_[depth + 1];
        child_path.assign(parent_path).append(1, '/').append(name);
        r.path.assign(child_path);
        r.name_offset = static_cast<std::uint32_t>(parent_path.size() + 1);
        r.dir_id = child_id;
        r.children = static_cast<std::uint32_t>(child_children);
        fill_metadata(r, true, depth + 1 < shape_.levels ? child_children : 0);
        if (path_sink_ != nullptr) (*path_sink_)(child_path);
        if (auto s = record_done(); !s) return s;
        if (auto s = emit_contents(child_id, depth + 1, child_below); !s) return s;
    }
    return {};
}

core::Status SyntheticTree::record_done() {
    ++entries_;
    if (batch_[used_].type == core::EntryType::Directory) ++dirs_;
    if (++used_ < batch_.size()) return {};
    used_ = 0;
    return (*batch_sink_)(std::span(batch_.data(), batch_.size()));
}

void SyntheticTree::fill_metadata(core::WalkResult& r, bool directory, std::uint64_t subdirs) {
    const std::uint64_t h = mix(seed_ ^ mix(entries_));
    r.error = 0;
    r.has_stat = true;
    r.dev = kDevice;
    r.ino = 2 + entries_;
    r.uid = 1000;
    r.gid = 1000;
    const auto seconds = kEpochStart + static_cast<std::int64_t>(h % kTimeSpan);
    r.mtime_ns = seconds * kNsPerSecond + static_cast<std::int64_t>((h >> 32) % kNsPerSecond);
    r.ctime_ns = r.mtime_ns + static_cast<std::int64_t>((h >> 40) % 3600) * kNsPerSecond;
    if (directory) {
        r.type = core::EntryType::Directory;
        r.mode = S_IFDIR | 0755;
        r.size = 4096;
        r.blocks = 8;
        r.nlink = 2 + subdirs;
        return;
    }
    r.type = core::EntryType::File;
    r.mode = S_IFREG | ((h & 15) == 0 ? 0755 : 0644);
    // Sizes spread over 0 B .. 16 MiB, most of them small, as in real trees.
    const unsigned bits = static_cast<unsigned>((h >> 8) % 25);
    r.size = (h >> 16) & ((std::uint64_t{1} << bits) - 1);
    r.blocks = (r.size + 4095) / 4096 * 8;
    r.nlink = 1;
}

void SyntheticTree::next_unique_name(std::vector<std::string>& siblings) {
    std::string name;
    do {
        names_.next(name);
    } while (std::find(siblings.begin(), siblings.end(), name) != siblings.end());
    siblings.push_back(std::move(name));
}

}  // namespace wsindex::bench
