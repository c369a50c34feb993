// JsonArrayStream: one JSON document written piece by piece, {"<key>":[...], <fields>}, so that a
// streamed answer (find, errors) leaves wsctl in bounded memory instead of as one DOM.
//
// The text is byte-identical to dump_json of the whole document (what wsctl printed when it
// gathered the batches first): the array's key sorts before every field that follows it, the
// elements are dumped as they are, and nlohmann's compact dump puts no space anywhere. A
// failure after elements went out cannot replace the document any more: the array is closed
// and the error's fields ("error", "exit_code", "message") end the same document, so stdout
// stays one valid JSON document and the exit code tells the failure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cli/context.hpp"
#include "ipc/error.hpp"

namespace wsindex::cli {

class JsonArrayStream {
  public:
    // `key` is the array's name. When every field later passed to close() sorts after it, the
    // text is dump_json's of the whole document (find, errors); otherwise (dupes, whose totals
    // come after its groups) the same document with its members in another order.
    JsonArrayStream(const Context& ctx, std::string_view key);

    // Writes one element (its JSON text); the document is opened by the first one.
    void element(std::string_view json);
    // Writes `n` elements at once: their JSON texts joined by commas.
    void elements(std::string_view joined, std::uint64_t n);
    // The elements written so far.
    [[nodiscard]] std::uint64_t count() const { return count_; }

    // Ends the document: `fields` is the rest of the object's members as JSON text, sorted,
    // without a leading comma (e.g. "\"truncated\":false"), or empty. Then a newline.
    void close(std::string_view fields);

    // Reports `error`. Before the first element: as report() does (the error document alone).
    // After: "wsctl: ..." on stderr, and the error's fields end the open document. Returns the
    // exit code.
    int fail(const ipc::Error& error);

  private:
    void open();

    const Context& ctx_;
    std::string head_;  // {"<key>":[
    bool opened_ = false;
    std::uint64_t count_ = 0;
};

}  // namespace wsindex::cli
