// DupesReplyReader: what it accepts it reads exactly as the DOM path does (parse_reply, then
// from_json<DupesReply>); everything else it declines.
#include "ipc/dupes_reply_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ipc/dupes_reply_writer.hpp"
#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"
#include "tests/ipc/support/dupes_replies.hpp"

namespace wsindex::ipc {
namespace {

using namespace std::string_literals;
using test::daemon_frame;

void expect_same(const DupesReply& a, const DupesReply& b, std::string_view frame) {
    ASSERT_EQ(a.groups.size(), b.groups.size()) << frame;
    for (std::size_t g = 0; g < a.groups.size(); ++g) {
        EXPECT_EQ(a.groups[g].size, b.groups[g].size) << frame;
        EXPECT_EQ(a.groups[g].wasted, b.groups[g].wasted) << frame;
        ASSERT_EQ(a.groups[g].files.size(), b.groups[g].files.size()) << frame;
        for (std::size_t f = 0; f < a.groups[g].files.size(); ++f) {
            EXPECT_EQ(a.groups[g].files[f].names, b.groups[g].files[f].names) << frame;
        }
    }
    EXPECT_EQ(a.changed, b.changed) << frame;
    EXPECT_EQ(a.wasted, b.wasted) << frame;
    EXPECT_EQ(a.candidates, b.candidates) << frame;
    EXPECT_EQ(a.unreadable, b.unreadable) << frame;
    EXPECT_EQ(a.cached, b.cached) << frame;
    EXPECT_EQ(a.hashed, b.hashed) << frame;
    EXPECT_EQ(a.files_read, b.files_read) << frame;
    EXPECT_EQ(a.bytes_read, b.bytes_read) << frame;
    EXPECT_EQ(a.elapsed_ms, b.elapsed_ms) << frame;
    EXPECT_EQ(a.progress.has_value(), b.progress.has_value()) << frame;
}

// Accepted, and read as the DOM path reads it.
void expect_read_like_dom(std::string_view frame) {
    DupesReplyReader reader;
    ASSERT_TRUE(reader.read(frame)) << "declined: " << frame;
    const auto parsed = parse_reply(frame);
    ASSERT_TRUE(parsed) << "the DOM path refuses: " << frame;
    const auto dom = from_json<DupesReply>(parsed->parameters);
    ASSERT_TRUE(dom) << "the DOM path refuses: " << frame;
    EXPECT_EQ(reader.continues(), parsed->continues) << frame;
    expect_same(reader.reply(), *dom, frame);
}

void expect_declined(std::string_view frame) {
    DupesReplyReader reader;
    EXPECT_FALSE(reader.read(frame)) << frame;
}

TEST(DupesReplyReader, DaemonFramesAreReadAsTheDomReadsThem) {
    expect_read_like_dom(daemon_frame(DupesReply{}, false));
    expect_read_like_dom(daemon_frame(test::reply_with_odd_names(), true));
    expect_read_like_dom(daemon_frame(test::reply_with_odd_names(), false));
}

TEST(DupesReplyReader, OtherWhitespaceAndKeyOrdersAreReadToo) {
    expect_read_like_dom(
        R"( { "parameters" : { "wasted" : 5 , "groups" : [ { "wasted" : 5, "size" : 5,)"
        R"( "files" : [ { "names" : [ "/a" , { "b64" : "L2L/" } ] } ] } ] } ,)"
        R"( "continues" : true } )");
    expect_read_like_dom(R"({"parameters":{}})");
}

TEST(DupesReplyReader, AnythingElseIsDeclined) {
    for (const char* frame : {
             R"({"error":{"kind":"Busy","message":"x"}})",
             R"({"continues":true,"parameters":{"progress":{"phase":"partial"}}})",
             R"({"parameters":{"wasted":-1}})",
             R"({"parameters":{"wasted":1.5}})",
             R"({"parameters":{"wasted":null}})",
             R"({"parameters":{"wasted":1,"wasted":2}})",
             R"({"parameters":{"new_field":1}})",
             R"({"parameters":{"changed":[{"b64":"not base64!"}]}})",
             R"({"parameters":{"changed":[{"b64":"L2E=","x":1}]}})",
             R"({"parameters":{"changed":[{}]}})",
             R"({"parameters":{"groups":[{"files":[{"names":[1]}]}]}})",
             R"({"parameters":{"groups":{}}})",
             R"({"parameters":[]})",
             R"({"continues":true})",
             R"({"parameters":{}} trailing)",
             "{\"parameters\":{\"changed\":[\"\xff\"]}}",
             R"({"parameters":{"groups":[)",
             "",
         }) {
        expect_declined(frame);
    }
}

TEST(DupesReplyReader, EachReadStartsAfresh) {
    DupesReplyReader reader;
    ASSERT_TRUE(reader.read(daemon_frame(test::reply_with_odd_names(), true)));
    ASSERT_TRUE(reader.read(daemon_frame(DupesReply{}, false)));
    EXPECT_TRUE(reader.reply().groups.empty());
    EXPECT_TRUE(reader.reply().changed.empty());
    EXPECT_FALSE(reader.continues());
}

// -0 output straight from the frame: the bytes the DOM path's reply prints, appended after what
// the buffer held; the rest of the reply as before, and a declined frame appends nothing.
TEST(DupesReplyReader, NamesGoStraightToTheNullSeparatedOutput) {
    for (const DupesReply& reply : {test::reply_with_odd_names(), DupesReply{}}) {
        const std::string frame = daemon_frame(reply, true);
        const auto dom = from_json<DupesReply>(parse_reply(frame)->parameters);
        ASSERT_TRUE(dom);
        std::string expected = "before"s + '\0';
        append_null_separated(dom->groups, &expected);
        DupesReplyReader reader;
        std::string out = "before"s + '\0';
        ASSERT_TRUE(reader.read(frame, &out)) << frame;
        EXPECT_EQ(out, expected);
        ASSERT_EQ(reader.reply().groups.size(), dom->groups.size());
        for (std::size_t g = 0; g < dom->groups.size(); ++g) {
            EXPECT_EQ(reader.reply().groups[g].size, dom->groups[g].size);
            EXPECT_EQ(reader.reply().groups[g].wasted, dom->groups[g].wasted);
            EXPECT_TRUE(reader.reply().groups[g].files.empty());
        }
        EXPECT_EQ(reader.reply().changed, dom->changed);
        EXPECT_EQ(reader.reply().wasted, dom->wasted);
    }
    // The odd names reply has names and groups to print.
    std::string odd;
    append_null_separated(test::reply_with_odd_names().groups, &odd);
    EXPECT_GT(odd.size(), 2u);
    // Declined after some names were read: they are taken back.
    DupesReplyReader reader;
    std::string out = "kept";
    EXPECT_FALSE(reader.read(R"({"parameters":{"groups":[{"files":[{"names":["/a","/b"]}]}],)"
                             R"("new_field":1}})",
                             &out));
    EXPECT_EQ(out, "kept");
}

}  // namespace
}  // namespace wsindex::ipc
