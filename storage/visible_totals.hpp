// Visible totals: per-directory totals of a subtree that count only the entries a caller may
// see, for answers that must not leak the sizes of what is hidden (docs/security.md).
//
// The precomputed totals (dirs rows, docs/schema.md) count everything. For a caller who may
// not list some directory of a subtree they would reveal the summed size of its contents, so
// the daemon (1) asks whether every directory of the subtree is listable (cheap: one pass over
// the covering prefix index, stopping at the first that is not), and only if not (2) recomputes
// the totals from the entries of the listable directories. The definitions are those of the
// precomputed totals (storage/tree_totals.hpp) restricted to visible entries: an entry counts
// if its directory is listable, a directory's own size counts if its own entry does, and an
// inode with several names counts once per directory total.
#pragma once

#include <functional>
#include <string_view>

#include "core/status.hpp"
#include "storage/queries.hpp"

namespace wsindex::storage {

class Database;

// May the caller list directory `path` (see its entries)? Called once per directory in
// pre-order (parents first); a caching implementation answers descendants of an unsearchable
// directory without a lookup.
using DirPredicate = std::function<bool(std::string_view path)>;

// True in *all_listable if `listable` holds for `path` and every indexed directory below it.
core::Status subtree_all_listable(Database& db, std::string_view path, const DirPredicate& listable,
                                  bool* all_listable);

struct VisibleTotalsRow {
    DirTotalsRow totals;   // over visible entries only
    bool partial = false;  // this directory or one below it is not listable by the caller
};

// Calls `visit` for `path` and every indexed directory below it, children before parents, with
// totals over the entries in listable directories. `own_visible`: may the caller see `path`'s
// own entry (its parent is outside the subtree)? One read transaction; not to be called inside
// the caller's transaction. Memory: the current directory chain, plus one (dev, ino) per
// multi-link inode per ancestor on that chain.
core::Status visible_dir_totals(Database& db, std::string_view path, bool own_visible,
                                const DirPredicate& listable,
                                const std::function<void(VisibleTotalsRow&&)>& visit);

}  // namespace wsindex::storage
