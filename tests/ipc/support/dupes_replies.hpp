// A wsindex.Dupes reply with every odd name and extreme number, for the writer's and the
// reader's tests (both compare with what the DOM path does for it).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ipc/dupes_reply_writer.hpp"
#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"

namespace wsindex::ipc::test {

// Names a reply may carry: newlines, quotes, control bytes, DEL, invalid UTF-8 (base64 on the
// wire), wide characters, a 255-byte name, and an empty one.
inline std::vector<std::string> odd_names() {
    return {"/plain/a.txt", "/with\nnewline", "/quote\"and\\backslash",    "/ctl\x01\x1f\x7f",
            "/bad\xff\xfe", "/utf8 日本語 😀", "/" + std::string(255, 'n'), std::string()};
}

// A group per odd name (one file with two names, as hard links are, and one with one), a group
// with no files, every odd name as changed, and the counters at their extremes.
inline DupesReply reply_with_odd_names() {
    DupesReply reply;
    const std::vector<std::string> names = odd_names();
    for (std::size_t g = 0; g < names.size(); ++g) {
        DupesGroupInfo group;
        group.size = g == 0 ? std::numeric_limits<std::uint64_t>::max() : g * 1000;
        group.wasted = group.size;
        group.files.push_back(DupesFileInfo{{names[g], names[(g + 1) % names.size()]}});
        group.files.push_back(DupesFileInfo{{names[(g + 2) % names.size()]}});
        reply.groups.push_back(group);
    }
    reply.groups.push_back(DupesGroupInfo{});
    reply.changed = names;
    reply.wasted = 12345;
    reply.candidates = 1;
    reply.unreadable = 2;
    reply.cached = 3;
    reply.hashed = std::numeric_limits<std::uint64_t>::max();
    reply.files_read = 5;
    reply.bytes_read = 6;
    reply.elapsed_ms = 7;
    return reply;
}

// A frame as the daemon sends it (without the NUL).
inline std::string daemon_frame(const DupesReply& reply, bool continues) {
    std::string frame = encode_reply_text(dupes_reply_text(reply), continues).value();
    frame.pop_back();
    return frame;
}

}  // namespace wsindex::ipc::test
