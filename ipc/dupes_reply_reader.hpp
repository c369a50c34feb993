// DupesReplyReader: wsctl's decoder of wsindex.Dupes reply frames, without a DOM.
//
// Why: a run over a tree with many duplicates answers with tens of thousands of names, and
// parsing each frame into an nlohmann DOM (a std::map per file and per group) and then copying
// it into DupesReply objects was most of wsctl's time on a second run. This reads the frame
// once through nlohmann's SAX interface (its lexer: the same JSON and UTF-8 rules) straight
// into a DupesReply.
//
// Frames in the daemon's exact layout with plain ASCII names are read without the lexer
// (dupes_reply_layout.hpp); the rest as follows.
//
// It reads exactly the shape the daemon writes for groups and totals (dupes_reply_text inside
// encode_reply_text): {"continues": bool, "parameters": {"groups": [{"files": [{"names": [...]}],
// "size", "wasted"}], "changed": [...], and the unsigned counters}}, keys in any order, names as
// strings or {"b64": ...}. Anything else — an error, a progress reply, an unknown or duplicate
// key, a negative or fractional number, a null, bad base64, any syntax error — is declined, and
// the caller decodes that frame the usual way (parse_reply, then from_json<DupesReply>), which
// gives the same reply or the exact error. It only decides which frames are plain enough to
// read fast, never what a frame means.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ipc/methods.hpp"

namespace wsindex::ipc {

class DupesReplyReader {
  public:
    // Decodes one reply frame (without its NUL). True: reply() and continues() describe it.
    // False: declined (see above); reply() is then meaningless.
    bool read(std::string_view frame);
    // The same, but the groups' names are appended to *null_separated as `wsctl dupes -0`
    // prints them (append_null_separated) instead of being kept: reply().groups then hold their
    // size and wasted space and no files. For tens of thousands of names that saves a string
    // and a vector per file (most of wsctl's allocations and page faults). Declined: nothing
    // is appended.
    bool read(std::string_view frame, std::string* null_separated);

    // The reply of the last frame read; the caller may move from it.
    [[nodiscard]] DupesReply& reply() { return reply_; }
    [[nodiscard]] bool continues() const { return continues_; }

  private:
    DupesReply reply_;
    bool continues_ = false;
};

// `wsctl dupes -0`: each name of each file of a group NUL-terminated, and one more NUL after
// each group.
void append_null_separated(const std::vector<DupesGroupInfo>& groups, std::string* out);

}  // namespace wsindex::ipc
