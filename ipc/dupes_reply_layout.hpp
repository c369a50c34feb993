// The daemon's own layout of a wsindex.Dupes reply frame, read without a JSON lexer: the fast
// path of DupesReplyReader (dupes_reply_reader.hpp).
//
// Why: on a second run wsctl's time went mostly to nlohmann's lexer, which takes a name one
// byte at a time (UTF-8 checks, a push_back per byte). The daemon writes one fixed layout
// (dupes_reply_text inside encode_reply_text): no whitespace, keys in sorted order, unsigned
// counters, names as strings. This reads exactly that layout, and only strings made of
// printable ASCII without escapes (bytes 0x20-0x7E but '"' and '\'), whose value is their bytes.
// Anything else — another key order, whitespace, an escape, a byte outside that range (a UTF-8
// name), a {"b64": ...} name, "progress", a leading zero, a number past 2^64 - 1 — is not read
// here, and the reader takes the frame through the lexer as before. So what this accepts is a
// strict subset of JSON, read as the lexer reads it.
#pragma once

#include <string>
#include <string_view>

#include "ipc/methods.hpp"

namespace wsindex::ipc {

// True: the frame is in the layout above; *reply and *continues hold it. With null_separated,
// the groups' names are appended there as `wsctl dupes -0` prints them (and not kept in
// *reply). False: not that layout; *reply is meaningless and nothing was appended.
bool read_dupes_reply_layout(std::string_view frame, DupesReply* reply, bool* continues,
                             std::string* null_separated);

}  // namespace wsindex::ipc
