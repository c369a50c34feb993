// Du answers for callers who may not see everything: totals recomputed over the entries they
// may see, so that a total never includes the sizes of hidden files (docs/security.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "daemon/seams.hpp"
#include "ipc/methods.hpp"
#include "storage/database.hpp"

namespace wsindex::daemon {

// Does `view` see every directory of the subtree at `path`? Then the precomputed totals leak
// nothing and the answer may use them as they are. Root (sees_everything) costs nothing; any
// other caller one pass over the subtree's directories (cached permission lookups).
core::Status sees_whole_subtree(storage::Database& db, const std::string& path,
                                const CallerView& view, bool* whole);

// The du rows of `path` (the path first, then its visible descendants: up to `depth` levels in
// path order, or, with `top` > 0, the `top` largest at any depth up to `depth` — any depth when
// `depth` is 0 — by visible size), with totals over visible entries and `partial` set where
// something below is hidden. Appended to `out`. `depth` and `top` as in ipc::DuParams.
core::Status visible_du_rows(storage::Database& db, const std::string& path, const CallerView& view,
                             std::uint32_t depth, std::uint64_t top,
                             std::vector<ipc::DuEntry>* out);

}  // namespace wsindex::daemon
