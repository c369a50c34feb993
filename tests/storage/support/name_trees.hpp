// Walk records of wide trees with mixed-case names (no file system), and a name index search
// collected as rows: shared by the name file and trigram list tests.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "core/range_executor.hpp"
#include "core/walk_result.hpp"
#include "storage/name_index.hpp"

namespace wsindex::storage {

// A tree of `dirs` directories of `files` files each, with names in mixed case, built as walk
// records directly (no file system).
inline std::vector<core::WalkResult> wide_tree(const std::string& root, int dirs, int files) {
    std::vector<core::WalkResult> out;
    core::WalkResult top;
    top.path = root;
    top.dir_id = 1;
    top.type = core::EntryType::Directory;
    top.has_stat = true;
    top.nlink = 2;
    top.dev = 1;
    top.mode = 040755;
    out.push_back(top);
    std::uint64_t ino = 10;
    for (int d = 0; d < dirs; ++d) {
        core::WalkResult dir;
        dir.path = root + "/Dir" + std::to_string(d * 7919 % 1000);
        dir.path += "_" + std::to_string(d);
        dir.name_offset = static_cast<std::uint32_t>(root.size() + 1);
        dir.parent_id = 1;
        dir.dir_id = static_cast<std::uint64_t>(d) + 2;
        dir.depth = 1;
        dir.type = core::EntryType::Directory;
        dir.has_stat = true;
        dir.nlink = 2;
        dir.dev = 1;
        dir.ino = ino++;
        dir.mode = 040755;
        out.push_back(dir);
        for (int f = 0; f < files; ++f) {
            core::WalkResult r;
            static const char* kStems[] = {"report", "Notes", "main", "UTIL", "ReadMe", "x"};
            r.path = dir.path + "/" + kStems[(d + f) % 6] + std::to_string((f * 131 + d) % 977) +
                     (f % 3 == 0 ? ".TXT" : ".cpp") + "_" + std::to_string(f);
            r.name_offset = static_cast<std::uint32_t>(dir.path.size() + 1);
            r.parent_id = dir.dir_id;
            r.depth = 2;
            r.type = f % 11 == 0 ? core::EntryType::Symlink : core::EntryType::File;
            r.has_stat = true;
            r.nlink = 1;
            r.dev = 1;
            r.ino = ino++;
            r.size = f;
            r.mode = 0100644;
            out.push_back(r);
        }
    }
    return out;
}

using Row = std::tuple<std::int64_t, std::string, char>;

inline std::vector<Row> search(const NameIndex& index, const std::string& needle, bool icase,
                               core::RangeExecutor* executor = nullptr, std::size_t limit = 0) {
    std::vector<Row> rows;
    index.for_each_substring(
        needle, icase,
        [&](const NameIndex::Key& k) {
            rows.emplace_back(k.dir, std::string(k.prefix) + std::string(k.name), k.type);
            return limit == 0 || rows.size() < limit;
        },
        executor);
    return rows;
}

}  // namespace wsindex::storage
