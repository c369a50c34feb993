// meta.generation and meta.revision (storage/index_version.hpp).
#include "storage/index_version.hpp"

#include "storage/statement.hpp"

namespace wsindex::storage {

core::Status note_index_change(Database& db, bool keys_changed) {
    // An index created before revisions existed has no row yet: the upsert adds it.
    if (auto s = db.exec("INSERT INTO meta(key, value) VALUES ('revision', 1)"
                         " ON CONFLICT(key) DO UPDATE SET value = value + 1");
        !s) {
        return s;
    }
    if (!keys_changed) return {};
    return db.exec("UPDATE meta SET value = value + 1 WHERE key = 'generation'");
}

core::Status read_index_version(Database& db, std::int64_t* generation, std::int64_t* revision) {
    *generation = 0;
    *revision = 0;
    Statement s;
    if (auto st =
            db.prepare("SELECT key, value FROM meta WHERE key IN ('generation', 'revision')", &s);
        !st) {
        return st;
    }
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) return {};
        (s.column_bytes(0) == "generation" ? *generation : *revision) = s.column_int64(1);
    }
}

}  // namespace wsindex::storage
