// BindCache: skips sqlite3_bind_* calls that would bind the value a parameter already holds.
//
// Why: the scan writer's multi-row INSERT binds 14 parameters per row, and one
// sqlite3_bind_int64 costs ~90 instructions (callgrind: 12% of the writer). SQLite keeps
// bindings across sqlite3_reset, and in a tree most columns repeat from one row to the row
// that used the same parameter slot one execution earlier (uid, gid, dev, nlink, mode, type,
// a NULL error), so those binds can be skipped.
//
// Invariant: for every slot the cache marks as known, the statement holds exactly that value.
// Anything that clears or changes bindings behind the cache's back (Statement::run(),
// sqlite3_clear_bindings, re-preparing) must be followed by forget().
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "storage/statement.hpp"

namespace wsindex::storage {

class BindCache {
  public:
    // The cached statement and its number of parameters.
    void attach(Statement* statement, int parameters) {
        statement_ = statement;
        slots_.assign(static_cast<std::size_t>(parameters) + 1, Slot{});
    }
    void forget() { slots_.assign(slots_.size(), Slot{}); }

    void bind_int64(int index, std::int64_t value) {
        Slot& s = slots_[static_cast<std::size_t>(index)];
        if (s.kind == Kind::integer && s.value == value) return;
        statement_->bind_int64(index, value);
        s = Slot{Kind::integer, value, nullptr};
    }
    void bind_null(int index) {
        Slot& s = slots_[static_cast<std::size_t>(index)];
        if (s.kind == Kind::null) return;
        statement_->bind_null(index);
        s = Slot{Kind::null, 0, nullptr};
    }
    // `text` must outlive every execution that uses it (bound SQLITE_STATIC): string literals.
    void bind_static_text(int index, std::string_view text);

  private:
    enum class Kind : std::uint8_t { unknown, integer, null, static_text };
    struct Slot {
        Kind kind = Kind::unknown;
        std::int64_t value = 0;      // integer
        const char* text = nullptr;  // static_text: the bound pointer (compared, not read)
    };
    Statement* statement_ = nullptr;
    std::vector<Slot> slots_;
};

}  // namespace wsindex::storage
