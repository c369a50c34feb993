// JsonArrayStream: a {"key":[...],...} document written as its elements arrive.
#include "cli/json_stream.hpp"

#include <nlohmann/json.hpp>

#include "ipc/json_writer.hpp"

namespace wsindex::cli {

JsonArrayStream::JsonArrayStream(const Context& ctx, std::string_view key) : ctx_(ctx) {
    head_ = "{";
    ipc::append_json_string(head_, key);
    head_ += ":[";
}

void JsonArrayStream::open() {
    if (opened_) return;
    opened_ = true;
    write_out(ctx_, head_);
}

void JsonArrayStream::element(std::string_view json) { elements(json, 1); }

void JsonArrayStream::elements(std::string_view joined, std::uint64_t n) {
    open();
    if (n == 0) return;
    if (count_ > 0) write_out(ctx_, ",");
    write_out(ctx_, joined);
    count_ += n;
}

void JsonArrayStream::close(std::string_view fields) {
    open();
    write_out(ctx_, "]");
    if (!fields.empty()) {
        write_out(ctx_, ",");
        write_out(ctx_, fields);
    }
    write_out(ctx_, "}\n");
}

int JsonArrayStream::fail(const ipc::Error& error) {
    if (!opened_) return report(ctx_, error);
    Context people = ctx_;
    people.json = false;  // the message on stderr only; the fields go into the open document
    const int code = report(people, error);
    close(error_fields(error, code));
    return finish(ctx_, code);
}

}  // namespace wsindex::cli
