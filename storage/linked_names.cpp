// Linked names: the indexed names of a hard-linked inode, found through `links`.
#include "storage/linked_names.hpp"

namespace wsindex::storage {

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
        std::string_view prefix = s.column_bytes(0);
        if (prefix.size() > 1 && prefix.back() == '/') prefix.remove_suffix(1);
        out->push_back(LinkedName{std::string(prefix), std::string(s.column_bytes(1))});
    }
}

}  // namespace wsindex::storage
