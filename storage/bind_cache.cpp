// BindCache: see the header.
#include "storage/bind_cache.hpp"

#include <sqlite3.h>

namespace wsindex::storage {

void BindCache::bind_static_text(int index, std::string_view text) {
    Slot& s = slots_[static_cast<std::size_t>(index)];
    const auto length = static_cast<std::int64_t>(text.size());
    if (s.kind == Kind::static_text && s.text == text.data() && s.value == length) return;
    sqlite3_bind_text(statement_->handle(), index, text.data(), static_cast<int>(text.size()),
                      SQLITE_STATIC);
    s = Slot{Kind::static_text, length, text.data()};
}

}  // namespace wsindex::storage
