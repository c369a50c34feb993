// TreeTotals: bottom-up propagation of per-directory sums, with hard links counted once.
#include "storage/tree_totals.hpp"

#include <algorithm>
#include <numeric>

namespace wsindex::storage {

TreeTotals::Dir& TreeTotals::at(std::uint64_t id) {
    while ((id >> kChunkShift) >= chunks_.size())
        chunks_.push_back(std::make_unique<Dir[]>(kChunk));
    size_ = std::max(size_, id + 1);
    return dir(id);
}

void TreeTotals::add(const core::WalkResult& r) {
    const auto size = static_cast<std::int64_t>(r.has_stat ? r.size : 0);
    const auto blocks = static_cast<std::int64_t>(r.has_stat ? r.blocks : 0);
    if (r.is_dir()) {
        if (r.parent_id != 0) at(r.parent_id).single.dirs += 1;
        if (r.dir_id == 0) return;  // a directory that was never opened: counted, no node
        Dir& d = at(r.dir_id);
        d.parent = r.parent_id;
        d.depth = r.depth;
        d.seen = true;
        d.single.size += size;
        d.single.blocks += blocks;
        return;
    }
    if (r.has_stat && r.nlink > 1) {
        links_.push_back({r.dev, r.ino, r.parent_id, size, blocks});
        return;
    }
    if (r.parent_id == 0) return;  // a non-directory root: it has no directory to count in
    Totals& t = at(r.parent_id).single;
    t.size += size;
    t.blocks += blocks;
    t.files += 1;
}

void TreeTotals::finish() {
    // Children before parents: deepest first. Depth is known for every directory whose own
    // record arrived; the walk guarantees that for every directory it gave an id. One bucket
    // per depth (a counting sort): linear, where a comparison sort of the ids took ~50 ms of
    // the scan's serial end on 63k directories (perf, lopsided tree).
    std::uint32_t max_depth = 0;
    for (std::uint64_t id = 0; id < size_; ++id) {
        if (dir(id).seen) max_depth = std::max(max_depth, dir(id).depth);
    }
    std::vector<std::size_t> next(max_depth + 2, 0);  // next[depth]: its first slot in order
    for (std::uint64_t id = 0; id < size_; ++id) {
        if (dir(id).seen) ++next[dir(id).depth + 1];
    }
    std::partial_sum(next.begin(), next.end(), next.begin());
    std::vector<std::uint64_t> order(next.back());
    for (std::uint64_t id = 0; id < size_; ++id) {
        if (dir(id).seen) order[next[dir(id).depth]++] = id;
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Dir& d = dir(*it);
        if (d.parent == 0 || d.parent >= size_) continue;
        dir(d.parent).single += d.single;
    }
    if (links_.empty()) return;

    // Each multi-link inode adds itself once to every directory above any of its names: walk
    // up from each name, stopping where this inode's group already passed. Its names may show
    // different sizes (a file written between the stats of two of its names during the scan):
    // each directory counts the largest size, and apart from it the largest blocks, among the
    // names below it, as the recount from `links` does (totals_adjuster.cpp, scan_swap.cpp);
    // otherwise a later live update of one name, which adjusts totals by difference against
    // that recount, would leave the common ancestors off by the difference for good. Walking
    // the names of a group from the largest down gives each directory the largest below it.
    multi_.assign(size_, Totals{});
    const auto count = [&](auto value_of, auto add_to) {
        std::sort(links_.begin(), links_.end(), [&](const LinkName& a, const LinkName& b) {
            if (a.dev != b.dev) return a.dev < b.dev;
            if (a.ino != b.ino) return a.ino < b.ino;
            return value_of(a) > value_of(b);
        });
        std::vector<std::uint64_t> stamp(size_, 0);  // the last link group that touched a dir
        std::uint64_t group = 0;
        for (std::size_t i = 0; i < links_.size(); ++i) {
            if (i == 0 || links_[i].dev != links_[i - 1].dev ||
                links_[i].ino != links_[i - 1].ino) {
                ++group;
            }
            const LinkName& l = links_[i];
            for (std::uint64_t id = l.dir; id != 0 && id < size_; id = dir(id).parent) {
                if (stamp[id] == group) break;  // this inode already counted here and above
                stamp[id] = group;
                add_to(multi_[id], l);
            }
        }
    };
    count([](const LinkName& l) { return l.size; },
          [](Totals& t, const LinkName& l) {
              t.size += l.size;
              t.files += 1;
          });
    count([](const LinkName& l) { return l.blocks; },
          [](Totals& t, const LinkName& l) { t.blocks += l.blocks; });
}

Totals TreeTotals::total(std::uint64_t id) const {
    if (id >= size_) return Totals{};
    Totals t = dir(id).single;
    if (id < multi_.size()) t += multi_[id];
    return t;
}

Totals TreeTotals::single(std::uint64_t id) const { return id < size_ ? dir(id).single : Totals{}; }

}  // namespace wsindex::storage
