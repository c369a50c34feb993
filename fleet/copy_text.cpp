// CopyRow: PostgreSQL COPY text format (tab-separated, backslash escapes).
#include "fleet/copy_text.hpp"

namespace wsindex::fleet {

void CopyRow::separate() {
    if (!first_) out_->push_back('\t');
    first_ = false;
}

CopyRow& CopyRow::bytes(std::string_view value) {
    static constexpr char kHex[] = "0123456789abcdef";
    separate();
    // bytea's hex input "\x..", its backslash doubled for COPY.
    out_->append("\\\\x");
    for (const unsigned char c : value) {
        out_->push_back(kHex[c >> 4]);
        out_->push_back(kHex[c & 15]);
    }
    return *this;
}

CopyRow& CopyRow::text(std::string_view value) {
    separate();
    for (const char c : value) {
        switch (c) {
            case '\\':
                out_->append("\\\\");
                break;
            case '\t':
                out_->append("\\t");
                break;
            case '\n':
                out_->append("\\n");
                break;
            case '\r':
                out_->append("\\r");
                break;
            default:
                out_->push_back(c);
        }
    }
    return *this;
}

CopyRow& CopyRow::integer(std::int64_t value) {
    separate();
    out_->append(std::to_string(value));
    return *this;
}

CopyRow& CopyRow::null() {
    separate();
    out_->append("\\N");
    return *this;
}

void CopyRow::end() {
    out_->push_back('\n');
    first_ = true;
}

}  // namespace wsindex::fleet
