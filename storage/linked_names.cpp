// Linked names: the indexed names of a hard-linked inode, found through `links`.
#include "storage/linked_names.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace wsindex::storage {
namespace {

// A dirs prefix ("/a/b/", or "/") as a directory path.
std::string directory_path(std::string_view prefix) {
    if (prefix.size() > 1 && prefix.back() == '/') prefix.remove_suffix(1);
    return std::string(prefix);
}

}  // namespace

core::Status linked_names(Database& db, std::uint64_t dev, std::uint64_t ino,
                          std::vector<LinkedName>* out) {
    // links_inode finds the directories; each holds few names of one inode.
    Statement s;
    if (auto st =
            db.prepare("SELECT d.prefix, e.name FROM links AS l"
                       " JOIN dirs AS d ON d.id = l.dir"
                       " JOIN entries AS e ON e.dir = l.dir AND e.dev = l.dev AND e.ino = l.ino"
                       " WHERE l.dev = ?1 AND l.ino = ?2",
                       &s);
        !st) {
        return st;
    }
    s.bind_int64(1, static_cast<std::int64_t>(dev)).bind_int64(2, static_cast<std::int64_t>(ino));
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) return {};
        out->push_back(LinkedName{directory_path(s.column_bytes(0)), std::string(s.column_bytes(1)),
                                  dev, ino});
    }
}

core::Status names_by_entries_pass(Database& db, const std::vector<InodeNumber>& inodes,
                                   std::vector<LinkedName>* out) {
    // Few enough bound values per statement for any SQLite build (the limit may be 999).
    constexpr std::size_t kPerPass = 500;
    for (std::size_t first = 0; first < inodes.size(); first += kPerPass) {
        const std::size_t n = std::min(kPerPass, inodes.size() - first);
        std::string sql =
            "SELECT d.prefix, e.name, e.dev, e.ino FROM entries AS e JOIN dirs AS d ON d.id = e.dir"
            " WHERE e.ino IN (?";
        for (std::size_t i = 1; i < n; ++i) sql += ",?";
        sql += ")";
        Statement s;
        if (auto st = db.prepare(sql, &s); !st) return st;
        std::set<std::pair<std::uint64_t, std::uint64_t>> wanted;
        for (std::size_t i = 0; i < n; ++i) {
            const InodeNumber& inode = inodes[first + i];
            s.bind_int64(static_cast<int>(i + 1), static_cast<std::int64_t>(inode.ino));
            wanted.emplace(inode.dev, inode.ino);
        }
        for (bool row = true;;) {
            if (auto st = s.step(&row); !st) return st;
            if (!row) break;
            const auto dev = static_cast<std::uint64_t>(s.column_int64(2));
            const auto ino = static_cast<std::uint64_t>(s.column_int64(3));
            if (!wanted.contains({dev, ino})) continue;  // the same number on another device
            out->push_back(LinkedName{directory_path(s.column_bytes(0)),
                                      std::string(s.column_bytes(1)), dev, ino});
        }
    }
    return {};
}

}  // namespace wsindex::storage
