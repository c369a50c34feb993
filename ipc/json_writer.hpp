// JSON text without a DOM, for replies too hot to build as nlohmann::json (find's batches).
//
// Everything written here is what nlohmann::json::dump(-1, ' ', false, strict) — the protocol's
// dump_json — writes for the same value: strings escaped the same way (\" \\ \b \f \n \r \t,
// other control characters as lowercase \u00XX, everything else, DEL and non-ASCII included,
// as is), integers in decimal, byte strings in encode_bytes' form. Callers write object keys in
// the order nlohmann would (sorted), so the text is byte-identical to dumping the DOM; the
// tests compare the two.
//
// Strings must be valid UTF-8 (append_json_string does not check: append_json_bytes does, and
// the Responder validates the whole text before it is sent).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wsindex::ipc {

// Appends `utf8` as a quoted, escaped JSON string. Precondition: valid UTF-8.
void append_json_string(std::string& out, std::string_view utf8);

// Appends `bytes` as encode_bytes() encodes them: a JSON string when they are valid UTF-8,
// else {"b64":"<base64>"}.
void append_json_bytes(std::string& out, std::string_view bytes);

void append_json_uint(std::string& out, std::uint64_t value);
void append_json_int(std::string& out, std::int64_t value);

}  // namespace wsindex::ipc
