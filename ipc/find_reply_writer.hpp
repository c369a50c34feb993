// FindReplyWriter: a wsindex.Find reply's parameters written as JSON text, entry by entry.
//
// Why not ipc::to_json(FindReply): a find streams tens of thousands of entries, and building a
// DOM (an std::map and four values per entry) then dumping and destroying it was a third of
// the daemon's CPU per query. This writes the same text — byte-identical to
// dump_json(to_json(FindReply)), keys in nlohmann's sorted order — straight into one buffer,
// with no allocation per entry once the buffer has grown. Send it with Responder::more_text /
// reply_text. Not thread-safe: one producer owns a writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wsindex::ipc {

class FindReplyWriter {
  public:
    FindReplyWriter();

    // Appends one FindEntry. `path` is bytes (encoded as encode_bytes does); `type` is a find
    // %y letter (any other byte is written as to_json writes it: a non-ASCII one makes the text
    // invalid UTF-8, which the Responder refuses, as dump_json refuses the DOM).
    void add(std::string_view path, char type, std::uint64_t size, std::int64_t mtime_ns);
    // Appends one FindEntry without metadata (has_metadata false): path and type only.
    void add_path(std::string_view path, char type);

    // Entries added since the last take().
    [[nodiscard]] std::size_t entries() const { return entries_; }

    // The parameters {"entries":[...]} (with "truncated":true when `truncated`), and a fresh
    // batch: the next one starts empty, with room for as many bytes as this one used.
    std::string take(bool truncated = false);

  private:
    void start();

    std::string text_;  // "{\"entries\":[" and the entries so far, comma-separated
    std::size_t entries_ = 0;
};

}  // namespace wsindex::ipc
