// dupes_reply_text: the text written without a DOM is the text nlohmann writes for the same
// DupesReply (byte for byte), for odd names, extreme numbers and every optional member.
#include "ipc/dupes_reply_writer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"
#include "tests/ipc/support/dupes_replies.hpp"

namespace wsindex::ipc {
namespace {

using namespace std::string_literals;

std::string dom_text(const DupesReply& reply) {
    const auto text = dump_json(to_json(reply));
    EXPECT_TRUE(text.has_value());
    return text.value_or("");
}

TEST(DupesReplyWriter, AnEmptyReplyIsTheDomText) {
    const DupesReply reply;
    EXPECT_EQ(dupes_reply_text(reply), dom_text(reply));
}

TEST(DupesReplyWriter, GroupsWithOddNamesAndExtremeNumbersAreTheDomText) {
    const DupesReply reply = test::reply_with_odd_names();
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
