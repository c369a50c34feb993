// The patterns of `wsctl find` (docs/wsctl.md) as PostgreSQL regular expressions, so that
// `wsctl fleet find` matches what each host's own `wsctl find` matches. Both translations work
// on the bytes of a name or path seen as Latin-1 text (convert_from(x, 'LATIN1'): one character
// per byte, lossless for names without NUL), the way the daemon's SQLite GLOB and regcomp(3) in
// the C locale see them; every byte that is not an ASCII letter or digit is written as a
// \uXXXX escape, so the expression is plain ASCII whatever the database's encoding.
#pragma once

#include <string>
#include <string_view>

namespace wsindex::fleet {

// SQLite's GLOB (what `wsctl find --glob` runs): `*` any run, `?` one UTF-8 character (a lead
// byte and its continuation bytes, or one other byte), `[...]` / `[^...]` one character of a
// set with ranges, no escape character; the whole string must match. An unterminated `[`
// matches nothing (as in SQLite): then the expression is one that never matches. False with
// `error` set for what this translation does not cover (a non-ASCII character inside `[...]`).
bool glob_to_pg_regex(std::string_view glob, std::string* out, std::string* error);

// A POSIX extended regular expression (regcomp with REG_EXTENDED, glibc, C locale) in
// PostgreSQL's ARE dialect: bytes >= 0x80 as escapes, a backslash inside a bracket expression
// literal (as POSIX has it), GNU's \< \> \b \B as ARE's \m \M \y \Y, any other backslash before a
// letter or digit that ARE would read as an escape taken literally (as glibc does), except the
// back-references \1 to \9 and \w \W \s \S which both dialects share. The caller checks the
// pattern with regcomp first (so that what the daemon refuses is refused here too).
std::string posix_regex_to_pg(std::string_view regex);

}  // namespace wsindex::fleet
