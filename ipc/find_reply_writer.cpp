// FindReplyWriter: FindEntry objects as text, in the key order nlohmann's std::map dumps them.
#include "ipc/find_reply_writer.hpp"

#include <utility>

#include "ipc/json_writer.hpp"

namespace wsindex::ipc {

namespace {
constexpr std::string_view kOpen = R"({"entries":[)";
}  // namespace

FindReplyWriter::FindReplyWriter() { start(); }

void FindReplyWriter::start() {
    text_.append(kOpen);
    entries_ = 0;
}

void FindReplyWriter::add(std::string_view path, char type, std::uint64_t size,
                          std::int64_t mtime_ns) {
    // Sorted keys, as to_json(FindEntry) dumps: mtime_ns, path, size, type.
    text_.append(entries_ == 0 ? R"({"mtime_ns":)" : R"(,{"mtime_ns":)");
    append_json_int(text_, mtime_ns);
    text_.append(R"(,"path":)");
    append_json_bytes(text_, path);
    text_.append(R"(,"size":)");
    append_json_uint(text_, size);
    text_.append(R"(,"type":)");
    append_json_string(text_, std::string_view(&type, 1));
    text_.push_back('}');
    ++entries_;
}

void FindReplyWriter::add_path(std::string_view path, char type) {
    // Sorted keys, as to_json(FindEntry) dumps one without metadata: path, type.
    text_.append(entries_ == 0 ? R"({"path":)" : R"(,{"path":)");
    append_json_bytes(text_, path);
    text_.append(R"(,"type":)");
    append_json_string(text_, std::string_view(&type, 1));
    text_.push_back('}');
    ++entries_;
}

std::string FindReplyWriter::take(bool truncated) {
    text_.append(truncated ? R"(],"truncated":true})" : "]}");
    std::string out = std::move(text_);
    text_ = std::string();
    text_.reserve(out.size());
    start();
    return out;
}

}  // namespace wsindex::ipc
