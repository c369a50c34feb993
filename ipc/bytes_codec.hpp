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

// For log lines: display_bytes with control characters escaped (\n, \t, \xHH), so that a
// name cannot end a log line early or forge the next one. Lossy too, not for machines.
std::string log_bytes(std::string_view bytes);

}  // namespace wsindex::ipc
