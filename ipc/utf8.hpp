// Strict UTF-8 validation (RFC 3629) and a lossy sanitiser for human-readable text.
//
// The validator accepts exactly what nlohmann::json::dump accepts without throwing (no overlong
// forms, no surrogates, nothing above U+10FFFF), so a string it accepts can always be dumped.
#pragma once

#include <string>
#include <string_view>

namespace wsindex::ipc {

// True when `bytes` is well-formed UTF-8. NUL (U+0000) is valid: JSON escapes it as \u0000.
bool is_valid_utf8(std::string_view bytes);

// For messages meant for people only: every maximal invalid subsequence becomes U+FFFD.
// Never use it on names or paths (lossy); those go through encode_bytes().
std::string sanitize_utf8(std::string_view bytes);

}  // namespace wsindex::ipc
