// Names on screen: any bytes made into text that cannot move the cursor or break a row
// (escapes for control characters, invalid UTF-8 and bidi controls), measured in terminal
// columns with wcwidth so that wide characters (CJK, emoji) keep the columns aligned.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace wsindex::cli::ui {

struct ShownText {
    std::string text;       // UTF-8 (ASCII only when the terminal is not UTF-8)
    std::size_t width = 0;  // terminal columns
};

// Escapes: \n \t \r \\ for those, \xHH for other control bytes and for each byte of an invalid
// UTF-8 sequence, \u{HHHH} for code points that are valid but unprintable (C1 controls, bidi
// overrides, anything wcwidth rejects). With utf8_terminal false every non-ASCII byte is \xHH.
ShownText shown_name(std::string_view bytes, bool utf8_terminal);

// `text` cut to at most `columns` columns, never inside a character; a cut text ends in "~".
// The result is padded with spaces to exactly `columns` when `pad`.
std::string fit_columns(const ShownText& text, std::size_t columns, bool pad);

// Whether the current locale's character set is UTF-8 (after setlocale(LC_ALL, "")).
bool locale_is_utf8();

}  // namespace wsindex::cli::ui
