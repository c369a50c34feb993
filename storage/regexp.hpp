// REGEXP for SQL: `name REGEXP 'pattern'` with POSIX extended regular expressions (regcomp).
#pragma once

#include "core/status.hpp"

struct sqlite3;

namespace wsindex::storage {

// Registers regexp(pattern, value) — what SQLite calls for `value REGEXP pattern` — and
// iregexp(pattern, value), its case-insensitive twin, on one connection. Patterns are POSIX
// extended regexes matched against the value's bytes; each statement compiles a pattern once.
// A bad pattern fails the statement with regcomp's message.
core::Status register_regexp(sqlite3* db);

}  // namespace wsindex::storage
