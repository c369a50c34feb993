// Windowed scan: the same block size and window growth as storage/name_index.cpp, so that the
// hand-off costs of the product's parallel search are part of what is measured.
#include "scan_search.hpp"

#include <algorithm>

namespace wsindex::bench {
namespace {

// As in storage/name_index.cpp.
constexpr std::size_t kBlock = 16384;
constexpr std::size_t kFirstWindowBlocks = 4;
constexpr std::size_t kMaxWindowBlocks = 64;

}  // namespace

std::vector<std::uint32_t> scan_search(const storage::NameFile& names, std::string_view needle,
                                       core::RangeExecutor* executor) {
    std::vector<std::uint32_t> out;
    std::vector<std::vector<std::uint64_t>> hits;
    std::size_t window_blocks = kFirstWindowBlocks;
    const std::size_t end = names.size();
    for (std::size_t at = 0; at < end;) {
        const std::size_t window_end = std::min(end, at + window_blocks * kBlock);
        const std::size_t blocks = (window_end - at + kBlock - 1) / kBlock;
        hits.resize(std::max(hits.size(), blocks));
        for (std::size_t b = 0; b < blocks; ++b) hits[b].clear();
        auto body = [&](std::size_t first, std::size_t last, unsigned) {
            for (std::size_t b = first; b < last; ++b) {
                const std::size_t from = at + b * kBlock;
                names.search(from, std::min(window_end, from + kBlock), needle, false, &hits[b]);
            }
        };
        if (executor == nullptr || executor->size() <= 1 || blocks == 1 ||
            !executor->parallel_for(blocks, body)) {
            for (std::size_t b = 0; b < blocks; ++b) hits[b].clear();
            body(0, blocks, 0);
        }
        for (std::size_t b = 0; b < blocks; ++b) {
            for (const std::uint64_t i : hits[b]) out.push_back(static_cast<std::uint32_t>(i));
        }
        at = window_end;
        window_blocks = std::min(kMaxWindowBlocks, window_blocks * 2);
    }
    return out;
}

}  // namespace wsindex::bench
