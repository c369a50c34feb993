// The memmem scan of the name index's base, in the windows NameIndex::search_base uses: serially
// (no executor) or on a RangeExecutor's workers, hits delivered in index order either way.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/range_executor.hpp"
#include "storage/name_file.hpp"

namespace wsindex::bench {

// The ids of the names holding `needle` (case-sensitive), in index order.
std::vector<std::uint32_t> scan_search(const storage::NameFile& names, std::string_view needle,
                                       core::RangeExecutor* executor);

}  // namespace wsindex::bench
