// DupesReply as text, in the key order nlohmann's std::map dumps it (dupes_reply_writer.hpp).
#include "ipc/dupes_reply_writer.hpp"

#include "ipc/json_writer.hpp"
#include "ipc/protocol.hpp"

namespace wsindex::ipc {
namespace {

void append_bytes_list(std::string& out, const std::vector<std::string>& list) {
    out.push_back('[');
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (i > 0) out.push_back(',');
        append_json_bytes(out, list[i]);
    }
    out.push_back(']');
}

// Sorted keys, as to_json(DupesGroupInfo) dumps: files (each {"names":[...]}), size, wasted.
void append_group(std::string& out, const DupesGroupInfo& g) {
    out.append(R"({"files":[)");
    for (std::size_t i = 0; i < g.files.size(); ++i) {
        out.append(i == 0 ? R"({"names":)" : R"(,{"names":)");
        append_bytes_list(out, g.files[i].names);
        out.push_back('}');
    }
    out.append(R"(],"size":)");
    append_json_uint(out, g.size);
    out.append(R"(,"wasted":)");
    append_json_uint(out, g.wasted);
    out.push_back('}');
}

}  // namespace

std::string dupes_reply_text(const DupesReply& reply) {
    std::string out;
    std::size_t guess = 256;
    for (const DupesGroupInfo& g : reply.groups) {
        guess += 48;
        for (const DupesFileInfo& f : g.files) {
            for (const std::string& n : f.names) guess += n.size() + 4;
            guess += 12;
        }
    }
    out.reserve(guess);
    // Sorted keys, as to_json(DupesReply) dumps.
    out.append(R"({"bytes_read":)");
    append_json_uint(out, reply.bytes_read);
    out.append(R"(,"cached":)");
    append_json_uint(out, reply.cached);
    out.append(R"(,"candidates":)");
    append_json_uint(out, reply.candidates);
    out.append(R"(,"changed":)");
    append_bytes_list(out, reply.changed);
    out.append(R"(,"elapsed_ms":)");
    append_json_uint(out, reply.elapsed_ms);
    out.append(R"(,"files_read":)");
    append_json_uint(out, reply.files_read);
    out.append(R"(,"groups":[)");
    for (std::size_t i = 0; i < reply.groups.size(); ++i) {
        if (i > 0) out.push_back(',');
        append_group(out, reply.groups[i]);
    }
    out.append(R"(],"hashed":)");
    append_json_uint(out, reply.hashed);
    if (reply.progress) {
        // Small and rare (twice a second at most): through the DOM.
        out.append(R"(,"progress":)");
        out.append(dump_json(to_json(*reply.progress)).value_or("null"));
    }
    out.append(R"(,"unreadable":)");
    append_json_uint(out, reply.unreadable);
    out.append(R"(,"wasted":)");
    append_json_uint(out, reply.wasted);
    out.push_back('}');
    return out;
}

}  // namespace wsindex::ipc
