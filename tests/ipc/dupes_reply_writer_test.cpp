// dupes_reply_text: the text written without a DOM is the text nlohmann writes for the same
// DupesReply (byte for byte), for odd names, extreme numbers and every optional member.
#include "ipc/dupes_reply_writer.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"

namespace wsindex::ipc {
namespace {

using namespace std::string_literals;

std::string dom_text(const DupesReply& reply) {
    const auto text = dump_json(to_json(reply));
    EXPECT_TRUE(text.has_value());
    return text.value_or("");
}

// Names a reply may carry: newlines, quotes, control bytes, DEL, invalid UTF-8 (base64 on the
// wire), a 255-byte name, and a path made of all of them.
std::vector<std::string> odd_names() {
    return {"/plain/a.txt", "/with\nnewline", "/quote\"and\\backslash",    "/ctl\x01\x1f\x7f",
            "/bad\xff\xfe", "/utf8 日本語 😀", "/" + std::string(255, 'n'), ""s};
}

TEST(DupesReplyWriter, AnEmptyReplyIsTheDomText) {
    const DupesReply reply;
    EXPECT_EQ(dupes_reply_text(reply), dom_text(reply));
}

TEST(DupesReplyWriter, GroupsWithOddNamesAndExtremeNumbersAreTheDomText) {
    DupesReply reply;
    const std::vector<std::string> names = odd_names();
    for (std::size_t g = 0; g < names.size(); ++g) {
        DupesGroupInfo group;
        group.size = g == 0 ? std::numeric_limits<std::uint64_t>::max() : g * 1000;
        group.wasted = group.size;
        // A file with several names (hard links) and files with one.
        group.files.push_back(DupesFileInfo{{names[g], names[(g + 1) % names.size()]}});
        group.files.push_back(DupesFileInfo{{names[(g + 2) % names.size()]}});
        reply.groups.push_back(group);
    }
    reply.groups.push_back(DupesGroupInfo{});  // no files at all
    reply.changed = names;
    reply.wasted = 12345;
    reply.candidates = 1;
    reply.unreadable = 2;
    reply.cached = 3;
    reply.hashed = std::numeric_limits<std::uint64_t>::max();
    reply.files_read = 5;
    reply.bytes_read = 6;
    reply.elapsed_ms = 7;
    EXPECT_EQ(dupes_reply_text(reply), dom_text(reply));
}

TEST(DupesReplyWriter, AProgressReplyIsTheDomText) {
    DupesReply reply;
    DupesProgressInfo p;
    p.run_id = 9;
    p.uid = 1000;
    p.phase = "partial";
    p.files_done = 10;
    p.files_total = 20;
    p.bytes_done = 30;
    p.bytes_total = 40;
    p.bytes_read = 50;
    p.bytes_per_second = 1234.5;
    p.elapsed_ms = 60;
    p.workers.push_back(DupesWorkerInfo{1, 2, 3, 4, 5, 6, 7});
    reply.progress = p;
    EXPECT_EQ(dupes_reply_text(reply), dom_text(reply));
}

}  // namespace
}  // namespace wsindex::ipc
