// The lossless encoding of byte strings (file names, paths, patterns) in JSON messages.
//
// A name that is valid UTF-8 is sent as a plain JSON string; any other byte string is sent as
// an object {"b64": "<base64 of the raw bytes>"}. Why this shape (docs/protocol.md, "Byte
// strings"): the common case stays readable for people and tools like jq; the rare case is
// explicit and typed, so no client can print or compare it as text by mistake; there is no
// escape character inside strings, so a valid name is never altered; and nlohmann::json (which
// throws on invalid UTF-8 at dump) only ever sees valid UTF-8. Decoders accept both forms for
// any bytes, so a client may always send {"b64": ...}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace wsindex::ipc {

// The JSON value for `bytes`: a string if valid UTF-8, else {"b64": ...}. Never throws.
nlohmann::json encode_bytes(std::string_view bytes);

// The bytes back. `field` names the parameter in the InvalidParameter error on a wrong type or
// bad base64.
Result<std::string> decode_bytes(const nlohmann::json& value, std::string_view field);

// For text meant for people (wsctl's human output, log lines): the bytes made valid UTF-8,
// lossy. Machines use decode_bytes.
std::string display_bytes(std::string_view bytes);

// For log lines: the one formatting of file-system bytes (and of any text that may hold them)
// in the daemon's log. Printable ASCII and well-formed UTF-8 stay as they are; \n and \t
// become "\n" and "\t"; every other control byte (ESC, CR, DEL...), each byte that is not
// well-formed UTF-8, and the bytes of the C1 controls (U+0080 to U+009F) and of U+2028/U+2029
// become "\xHH". So a name can neither end a log line early, forge the next one, nor send a
// terminal escape sequence. A backslash is kept as it is: the output is printable and valid
// UTF-8, hence log_bytes(log_bytes(x)) == log_bytes(x), which is what lets the daemon's log
// sink apply it to every whole message (daemon/logging.cpp) without escaping twice what was
// escaped here. The price: "\n" in a log line may also be a backslash and an n in the name.
// For people reading the log, not for machines (those use the index, encode_bytes).
std::string log_bytes(std::string_view bytes);

}  // namespace wsindex::ipc
