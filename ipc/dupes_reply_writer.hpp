// A wsindex.Dupes reply's parameters written as JSON text, without a DOM.
//
// Why not dump_json(to_json(DupesReply)): the reply of a run over a tree with many duplicates
// names tens of thousands of files, and building the nlohmann DOM (a std::map per file and per
// group), dumping and destroying it cost as much as finding the groups from the cached hashes.
// The text is byte-identical to dump_json(to_json(reply)) (keys in nlohmann's sorted order;
// the tests compare the two). Send it with Responder::more_text / reply_text.
#pragma once

#include <string>

#include "ipc/methods.hpp"

namespace wsindex::ipc {

// The parameters of `reply` as dump_json(to_json(reply)) writes them. Names are bytes (written
// as encode_bytes does), so the text is valid UTF-8 whenever the `progress` member's strings
// are (the Responder checks the whole text before sending it).
std::string dupes_reply_text(const DupesReply& reply);

}  // namespace wsindex::ipc
