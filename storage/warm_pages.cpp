#include "storage/warm_pages.hpp"

#include <sqlite3.h>

#include <cstdint>

namespace wsindex::storage {

bool warm_pages(Database& db, const std::function<bool()>& give_way) {
    sqlite3_progress_handler(
        db.handle(), 10000,
        [](void* arg) -> int {
            return (*static_cast<const std::function<bool()>*>(arg))() ? 1 : 0;
        },
        const_cast<std::function<bool()>*>(&give_way));
    bool complete = true;
    // With a WHERE: a bare count(*) is one opcode (OP_Count) that walks the whole b-tree,
    // and the progress handler runs only between opcodes. The term keeps one step per row
    // and reads the same pages (the key's first column, no overflow pages).
    for (const char* sql : {"SELECT count(*) FROM entries WHERE dir IS NOT NULL",
                            "SELECT count(*) FROM dirs WHERE id IS NOT NULL"}) {
        std::int64_t rows = 0;
        // SQLITE_INTERRUPT when it gave way; any other failure is the first query's to
        // report (the file is checked then).
        if (!db.query_int64(sql, &rows)) {
            complete = false;
            break;
        }
    }
    sqlite3_progress_handler(db.handle(), 0, nullptr, nullptr);
    return complete;
}

}  // namespace wsindex::storage
