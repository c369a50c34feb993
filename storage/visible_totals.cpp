// Visible totals: a pre-order pass over the subtree's dirs rows with a stack of open directories.
#include "storage/visible_totals.hpp"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "storage/database.hpp"
#include "storage/path_range.hpp"
#include "storage/read_transaction.hpp"
#include "storage/statement.hpp"
#include "storage/tree_totals.hpp"

namespace wsindex::storage {
namespace {

struct InodeKey {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    friend bool operator==(const InodeKey&, const InodeKey&) = default;
};
struct InodeHash {
    std::size_t operator()(const InodeKey& k) const noexcept {
        return std::hash<std::uint64_t>()(k.dev * 0x9e3779b97f4a7c15ULL ^ k.ino);
    }
};

// One directory on the current chain.
struct Frame {
    std::int64_t id = 0;
    std::string prefix;  // with the trailing '/'
    std::uint32_t depth = 0;
    bool listable = false;
    bool partial = false;
    Totals single;  // own size (if visible), single-link entries, then the children's `single`
    Totals links;   // multi-link inodes, each once
    std::unordered_set<InodeKey, InodeHash> seen;  // inodes in `links`
    std::unordered_map<std::string, std::pair<std::int64_t, std::int64_t>> child_dirs;  // own sizes
};

std::string_view path_of_prefix(std::string_view prefix) {
    if (prefix.size() > 1) prefix.remove_suffix(1);
    return prefix;
}

}  // namespace

core::Status subtree_all_listable(Database& db, std::string_view path, const DirPredicate& listable,
                                  bool* all_listable) {
    *all_listable = false;
    const PrefixRange r = subtree_range(path);
    Statement s;
    // Only the prefix column: the dirs_prefix index covers the whole pass.
    if (auto st = db.prepare("SELECT prefix FROM dirs WHERE prefix >= ? AND prefix < ?"
                             " ORDER BY prefix",
                             &s);
        !st) {
        return st;
    }
    s.bind_blob(1, r.lo).bind_blob(2, r.hi);
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        if (!listable(path_of_prefix(s.column_bytes(0)))) return {};
    }
    *all_listable = true;
    return {};
}

core::Status visible_dir_totals(Database& db, std::string_view path, bool own_visible,
                                const DirPredicate& listable,
                                const std::function<void(VisibleTotalsRow&&)>& visit) {
    ReadTransaction snapshot(db);
    if (auto st = snapshot.begin(); !st) return st;
    const PrefixRange r = subtree_range(path);
    Statement dirs, entries, own;
    if (auto st = db.prepare("SELECT id, parent, prefix, depth FROM dirs"
                             " WHERE id != 0 AND prefix >= ? AND prefix < ? ORDER BY prefix",
                             &dirs);
        !st) {
        return st;
    }
    if (auto st = db.prepare("SELECT name, type, size, blocks, nlink, dev, ino FROM entries"
                             " WHERE dir = ?",
                             &entries);
        !st) {
        return st;
    }
    if (auto st = db.prepare("SELECT size, blocks FROM entries WHERE dir = ? AND name = ?", &own);
        !st) {
        return st;
    }

    std::vector<Frame> stack;
    // Closes the top directory: report it, fold it into its parent.
    const auto pop = [&] {
        Frame f = std::move(stack.back());
        stack.pop_back();
        f.partial = f.partial || !f.listable;
        VisibleTotalsRow row;
        row.totals.path.assign(path_of_prefix(f.prefix));
        row.totals.depth = f.depth;
        Totals total = f.single;
        total += f.links;
        row.totals.size = total.size;
        row.totals.blocks = total.blocks;
        row.totals.files = total.files;
        row.totals.dirs = total.dirs;
        row.partial = f.partial;
        if (!stack.empty()) {
            stack.back().single += f.single;  // links were added to every ancestor already
            stack.back().partial = stack.back().partial || f.partial;
        }
        visit(std::move(row));
    };

    dirs.bind_blob(1, r.lo).bind_blob(2, r.hi);
    for (bool row = true;;) {
        if (auto st = dirs.step(&row); !st) return st;
        if (!row) break;
        Frame f;
        f.id = dirs.column_int64(0);
        const std::int64_t parent = dirs.column_int64(1);
        f.prefix.assign(dirs.column_bytes(2));
        f.depth = static_cast<std::uint32_t>(dirs.column_int64(3));
        // Pre-order: the prefixes sort parents first and keep each subtree contiguous.
        while (!stack.empty() &&
               f.prefix.compare(0, stack.back().prefix.size(), stack.back().prefix) != 0) {
            pop();
        }
        const std::string_view dir_path = path_of_prefix(f.prefix);
        if (stack.empty()) {
            // The subtree's top: its own entry lies in the parent directory, outside.
            if (own_visible) {
                own.reset();
                own.bind_int64(1, parent).bind_blob(
                    2, parent == 0 ? dir_path : base_name(dir_path));  // roots: the whole path
                bool found = false;
                if (auto st = own.step(&found); !st) return st;
                if (found) {
                    f.single.size += own.column_int64(0);
                    f.single.blocks += own.column_int64(1);
                }
            }
        } else if (auto it = stack.back().child_dirs.find(std::string(base_name(dir_path)));
                   it != stack.back().child_dirs.end()) {
            f.single.size += it->second.first;  // its entry in a listable parent
            f.single.blocks += it->second.second;
            stack.back().child_dirs.erase(it);
        }
        f.listable = listable(dir_path);
        stack.push_back(std::move(f));
        if (!stack.back().listable) continue;  // its entries are hidden: not even read

        entries.reset();
        entries.bind_int64(1, stack.back().id);
        for (bool e = true;;) {
            if (auto st = entries.step(&e); !st) return st;
            if (!e) break;
            Frame& top = stack.back();
            const std::int64_t size = entries.column_int64(2);
            const std::int64_t blocks = entries.column_int64(3);
            if (entries.column_bytes(1) == "d") {
                top.single.dirs += 1;
                top.child_dirs.emplace(std::string(entries.column_bytes(0)),
                                       std::make_pair(size, blocks));
                continue;
            }
            if (entries.column_int64(4) > 1) {
                // Once per directory total: up the chain until an ancestor already has it
                // (then every ancestor above has it too).
                const InodeKey key{static_cast<std::uint64_t>(entries.column_int64(5)),
                                   static_cast<std::uint64_t>(entries.column_int64(6))};
                for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
                    if (!it->seen.insert(key).second) break;
                    it->links += Totals{size, blocks, 1, 0};
                }
                continue;
            }
            top.single += Totals{size, blocks, 1, 0};
        }
    }
    while (!stack.empty()) pop();
    return {};
}

}  // namespace wsindex::storage
