// FindReplyReader: wsctl's decoder of wsindex.Find reply frames, without a DOM.
//
// Why: parsing each 1000-entry batch with nlohmann (whose lexer copies every character of
// every string twice, and whose DOM holds a std::map per entry) and then copying it into
// FindEntry objects was a third of wsctl's CPU on a 19k-entry answer. This reads the frame
// text once, straight into FindEntry objects that are reused from batch to batch.
//
// It reads exactly the shape the daemon writes (FindReplyWriter, or dump_json of a FindReply):
// {"parameters": {"entries": [{"path", "type", "size", "mtime_ns"}, ...], "truncated": bool},
// "continues": bool}, keys in any order, any JSON whitespace, paths as strings (with any JSON
// escape) or {"b64": ...}. Anything else — an error message, an unknown field, a duplicate
// key, a number written as 5.0, a null, a bad type letter or bad base64, invalid UTF-8, any
// syntax error — is declined, and the caller decodes that frame the usual way (parse_reply,
// then from_json<FindReply>), which gives the same entries or the exact error. So this reader
// never decides what a frame means differently from the DOM path (the tests feed both the same
// frames); it only decides which frames are plain enough to read fast.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"

namespace wsindex::ipc {

class FindReplyReader {
  public:
    explicit FindReplyReader(Limits limits = {}) : limits_(limits) {}

    // Decodes one reply frame (without its NUL). True: entries(), continues() and truncated()
    // describe it. False: declined (see above); the accessors are then meaningless.
    bool read(std::string_view frame);

    // The entries of the last frame read; valid until the next read().
    [[nodiscard]] std::span<const FindEntry> entries() const { return {entries_.data(), count_}; }
    [[nodiscard]] bool continues() const { return continues_; }
    [[nodiscard]] bool truncated() const { return truncated_; }

  private:
    class Cursor;

    Limits limits_;
    std::vector<FindEntry> entries_;  // the first count_ are the last frame's; reused
    std::size_t count_ = 0;
    bool continues_ = false;
    bool truncated_ = false;
    std::string scratch_;  // a "b64" value before decoding
};

}  // namespace wsindex::ipc
