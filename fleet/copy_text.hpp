// Rows for COPY ... FROM STDIN in PostgreSQL's text format: bytea values in hex (\x..), so any
// byte of a name (newline, tab, invalid UTF-8) round-trips; NULL as \N.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wsindex::fleet {

class CopyRow {
  public:
    explicit CopyRow(std::string* out) : out_(out) {}
    CopyRow& bytes(std::string_view value);  // a bytea column
    CopyRow& text(std::string_view value);   // a text column
    CopyRow& integer(std::int64_t value);
    CopyRow& null();
    void end();  // the row's newline

  private:
    void separate();
    std::string* out_;
    bool first_ = true;
};

}  // namespace wsindex::fleet
