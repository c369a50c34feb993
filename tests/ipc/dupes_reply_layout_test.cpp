// The daemon's dupes reply layout read without the lexer: what it accepts it reads as the DOM
// path does (parse_reply, then from_json<DupesReply>); any other text it leaves to the lexer.
#include "ipc/dupes_reply_layout.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "ipc/dupes_reply_reader.hpp"
#include "ipc/dupes_reply_writer.hpp"
#include "ipc/protocol.hpp"
#include "tests/ipc/support/dupes_replies.hpp"

namespace wsindex::ipc {
namespace {

using namespace std::string_literals;
using test::daemon_frame;

// Plain names, hard links, an empty group, extreme counters: the daemon's usual frame.
DupesReply plain_reply() {
    DupesReply r;
    DupesGroupInfo g;
    g.size = std::numeric_limits<std::uint64_t>::max();
    g.wasted = 0;
    g.files.push_back(DupesFileInfo{{"/a b/c", "/a b/c=link", "~!@#$%^&*()_+{}|:<>?`-=[];',./"}});
    g.files.push_back(DupesFileInfo{{"/d"}});
    r.groups.push_back(g);
    r.groups.push_back(DupesGroupInfo{});
    r.groups.push_back(DupesGroupInfo{1, 10, {DupesFileInfo{{"/x"}}, DupesFileInfo{{"/y"}}}});
    r.changed = {"/changed", ""};
    r.wasted = 10;
    r.candidates = 1;
    r.unreadable = 2;
    r.cached = 3;
    r.hashed = std::numeric_limits<std::uint64_t>::max();
    r.files_read = 0;
    r.bytes_read = 6;
    r.elapsed_ms = 7;
    return r;
}

std::string describe(const DupesReply& r) {
    std::string out;
    for (const auto& g : r.groups) {
        out += "group " + std::to_string(g.size) + " " + std::to_string(g.wasted) + ":";
        for (const auto& f : g.files) {
            for (const auto& n : f.names) out += " [" + n + "]";
            out += " |";
        }
        out += "\n";
    }
    out += "changed:";
    for (const auto& n : r.changed) out += " [" + n + "]";
    for (std::uint64_t v : {r.wasted, r.candidates, r.unreadable, r.cached, r.hashed, r.files_read,
                            r.bytes_read, r.elapsed_ms}) {
        out += " " + std::to_string(v);
    }
    return out + (r.progress ? " progress" : "");
}

// The DOM path's reading of a frame.
DupesReply dom_read(std::string_view frame, bool* continues) {
    const auto parsed = parse_reply(frame);
    EXPECT_TRUE(parsed) << frame;
    *continues = parsed->continues;
    const auto reply = from_json<DupesReply>(parsed->parameters);
    EXPECT_TRUE(reply) << frame;
    return *reply;
}

TEST(DupesReplyLayout, TheDaemonsFramesAreReadAsTheDomReadsThem) {
    for (const DupesReply& reply : {plain_reply(), DupesReply{}}) {
        for (bool more : {true, false}) {
            const std::string frame = daemon_frame(reply, more);
            DupesReply fast;
            bool continues = !more;
            ASSERT_TRUE(read_dupes_reply_layout(frame, &fast, &continues, nullptr)) << frame;
            bool dom_continues = false;
            const DupesReply dom = dom_read(frame, &dom_continues);
            EXPECT_EQ(describe(fast), describe(dom)) << frame;
            EXPECT_EQ(continues, dom_continues);

            // -0: the names appended as the DOM reply prints them.
            std::string expected = "x"s + '\0';
            append_null_separated(dom.groups, &expected);
            std::string out = "x"s + '\0';
            ASSERT_TRUE(read_dupes_reply_layout(frame, &fast, &continues, &out));
            EXPECT_EQ(out, expected);
        }
    }
}

// Valid JSON, read the same by the reader either way, but not the daemon's layout or not plain
// names: left to the lexer, nothing appended.
TEST(DupesReplyLayout, AnythingElseIsLeftToTheLexer) {
    const std::string plain = daemon_frame(plain_reply(), true);
    std::vector<std::string> others = {
        daemon_frame(test::reply_with_odd_names(), true),  // UTF-8, escapes, base64 names
        " " + plain,
        R"({"continues":false,"parameters":)" + plain.substr(plain.find(R"({"bytes_read")")),
    };
    const auto replaced = [&plain](const std::string& from, const std::string& to) {
        std::string s = plain;
        const std::size_t at = s.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return s.replace(at, from.size(), to);
    };
    others.push_back(replaced(R"("cached":3)", R"("cached":3.0)"));
    others.push_back(replaced(R"("cached":3)", R"("cached":3e0)"));
    others.push_back(replaced(R"("cached":3,"candidates":1)", R"("candidates":1,"cached":3)"));
    others.push_back(replaced(R"("/d")", R"("\/d")"));
    others.push_back(replaced(R"("/d")", "\"/\xc3\xa9\""));
    others.push_back(replaced(R"("/d")", R"({"b64":"L2Q="})"));
    others.push_back(replaced(R"(,"unreadable")", R"(,"progress":{"phase":"full"},"unreadable")"));
    others.push_back(replaced(R"("files":[)", R"("files": [)"));
    for (const std::string& frame : others) {
        DupesReply reply;
        bool continues = false;
        std::string out = "kept";
        EXPECT_FALSE(read_dupes_reply_layout(frame, &reply, &continues, &out)) << frame;
        EXPECT_EQ(out, "kept") << frame;
        // The reader still takes the frame the lexer's way, as the DOM reads it.
        DupesReplyReader reader;
        // Progress and fractions go on to the DOM way in wsctl (the lexer's reader declines them).
        const bool dom_way = frame.find("progress") != std::string::npos ||
                             frame.find("3.0") != std::string::npos ||
                             frame.find("3e0") != std::string::npos;
        ASSERT_EQ(reader.read(frame), !dom_way) << frame;
        if (dom_way) continue;
        bool dom_continues = false;
        EXPECT_EQ(describe(reader.reply()), describe(dom_read(frame, &dom_continues))) << frame;
    }
}

// Not JSON or not a dupes reply: declined here (and by the lexer).
TEST(DupesReplyLayout, BrokenFramesAreDeclined) {
    const std::string plain = daemon_frame(plain_reply(), false);
    const std::string max = std::to_string(std::numeric_limits<std::uint64_t>::max());
    const auto replaced = [&plain](const std::string& from, const std::string& to) {
        std::string s = plain;
        return s.replace(s.find(from), from.size(), to);
    };
    for (const std::string& frame : {
             plain.substr(0, plain.size() - 1),
             plain + "}",
             plain + " x",
             replaced(R"("cached":3)", R"("cached":03)"),
             replaced(R"("cached":3)", R"("cached":-3)"),
             replaced(R"("cached":3)", R"("cached":)"),
             replaced(R"("cached":3)", R"("cached":18446744073709551616)"),
             replaced(R"("hashed":)" + max, R"("hashed":)" + max + "0"),
             replaced(R"("/d")", R"("/d)"),
             replaced(R"("/d")", "\"/\td\""),
             replaced(R"({"names":["/d"]})", R"({"names":["/d"],})"),
             replaced(R"(,{"names":["/d"]})", R"(,)"),
             replaced(R"("changed":["/changed",""])", R"("changed":["/changed",])"),
             std::string(),
         }) {
        DupesReply reply;
        bool continues = false;
        EXPECT_FALSE(read_dupes_reply_layout(frame, &reply, &continues, nullptr)) << frame;
    }
}

}  // namespace
}  // namespace wsindex::ipc
