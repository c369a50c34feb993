// The wire protocol without I/O: message shapes, parsing and encoding of whole frames.
//
// One JSON object per message, terminated by a NUL byte (the Varlink convention):
//   request  {"method": "wsindex.Find", "parameters": {...}, "more": true}
//   reply    {"parameters": {...}, "continues": true}
//   error    {"error": "wsindex.NoSuchPath", "parameters": {"message": "...", ...}}
// Readers ignore fields they do not know. The full contract is docs/protocol.md.
// Nothing here throws: nlohmann's exceptions are caught at this edge and become Errors.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ipc/error.hpp"
#include "ipc/result.hpp"

namespace wsindex::ipc {

// 1 MiB: a find batch or a status reply is a few KiB; a megabyte is far past any honest
// message and small enough that a few hundred connections cannot exhaust memory.
inline constexpr std::size_t kDefaultMaxMessageBytes = std::size_t{1} << 20;
// Nesting deeper than this is refused before parsing; our messages nest 4 levels at most.
inline constexpr std::size_t kDefaultMaxDepth = 64;

struct Limits {
    std::size_t max_message_bytes = kDefaultMaxMessageBytes;  // without the NUL
    std::size_t max_depth = kDefaultMaxDepth;
};

struct Request {
    std::string method;                                    // "wsindex.Find"
    nlohmann::json parameters = nlohmann::json::object();  // always an object
    bool more = false;                                     // the caller accepts streamed replies
};

struct Reply {
    nlohmann::json parameters = nlohmann::json::object();  // always an object
    bool continues = false;                                // more replies to this call follow
};

// Parses one frame (without its NUL) as a request. Every structural problem (not JSON, not an
// object, no string "method", wrong types of "parameters"/"more", too deep, too large) is an
// InvalidRequest error whose message says what was wrong.
Result<Request> parse_request(std::string_view frame, const Limits& limits = {});

// Parses one frame as a reply. An error message from the server becomes Result's Error (kind
// from its name, Unknown for names this build does not know); a malformed frame is a Protocol
// error.
Result<Reply> parse_reply(std::string_view frame, const Limits& limits = {});

// Encoders return the frame including its trailing NUL. They fail (Internal) only when a
// string in the JSON is not valid UTF-8 — a bug: byte strings must go through encode_bytes —
// or (MessageTooLarge) when the message exceeds limits.max_message_bytes.
Result<std::string> encode_request(const Request& request, const Limits& limits = {});
Result<std::string> encode_reply(const Reply& reply, const Limits& limits = {});
// The same frame for parameters already serialised (the text of one JSON object, e.g. from
// FindReplyWriter): the same checks — Internal when the text is not valid UTF-8,
// MessageTooLarge over the cap — without a DOM.
Result<std::string> encode_reply_text(std::string_view parameters, bool continues,
                                      const Limits& limits = {});
// Always succeeds: the message is sanitised, and details that cannot be encoded are dropped.
std::string encode_error(const Error& error);

// Serialises one JSON value to text without throwing; nullopt when a string is invalid UTF-8.
std::optional<std::string> dump_json(const nlohmann::json& value);

// True when the JSON text nests arrays/objects deeper than max_depth (strings are skipped).
// Cheap and linear; run before parsing so deep input costs no allocation.
bool nesting_exceeds(std::string_view text, std::size_t max_depth);

}  // namespace wsindex::ipc
