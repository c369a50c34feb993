// FindReplyReader: what it accepts it reads exactly as the DOM path does (parse_reply, then
// from_json<FindReply>); everything else it declines.
#include "ipc/find_reply_reader.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ipc/find_reply_writer.hpp"
#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"

namespace wsindex::ipc {
namespace {

using nlohmann::json;
using namespace std::string_literals;

struct Decoded {
    std::vector<FindEntry> entries;
    bool continues = false;
    bool truncated = false;
};

// The DOM path's reading of `frame`; nullopt when it is an error or does not decode.
std::optional<Decoded> dom_read(std::string_view frame) {
    auto reply = parse_reply(frame);
    if (!reply) return std::nullopt;
    auto find = from_json<FindReply>(reply->parameters);
    if (!find) return std::nullopt;
    return Decoded{find->entries, reply->continues, find->truncated};
}

std::optional<Decoded> fast_read(FindReplyReader& reader, std::string_view frame) {
    if (!reader.read(frame)) return std::nullopt;
    return Decoded{
        {reader.entries().begin(), reader.entries().end()}, reader.continues(), reader.truncated()};
}

void expect_equal(const Decoded& a, const Decoded& b, std::string_view frame) {
    ASSERT_EQ(a.entries.size(), b.entries.size()) << frame;
    for (std::size_t i = 0; i < a.entries.size(); ++i) {
        EXPECT_EQ(a.entries[i].path, b.entries[i].path) << frame;
        EXPECT_EQ(a.entries[i].type, b.entries[i].type) << frame;
        EXPECT_EQ(a.entries[i].size, b.entries[i].size) << frame;
        EXPECT_EQ(a.entries[i].mtime_ns, b.entries[i].mtime_ns) << frame;
        EXPECT_EQ(a.entries[i].has_metadata, b.entries[i].has_metadata) << frame;
    }
    EXPECT_EQ(a.continues, b.continues) << frame;
    EXPECT_EQ(a.truncated, b.truncated) << frame;
}

// Accepted, and read as the DOM reads it.
void expect_read_like_dom(std::string_view frame) {
    FindReplyReader reader;
    const auto fast = fast_read(reader, frame);
    ASSERT_TRUE(fast.has_value()) << "declined: " << frame;
    const auto dom = dom_read(frame);
    ASSERT_TRUE(dom.has_value()) << "the DOM path refuses: " << frame;
    expect_equal(*fast, *dom, frame);
}

// A frame as the daemon sends it (without the NUL).
std::string daemon_frame(const std::vector<FindEntry>& entries, bool continues, bool truncated) {
    FindReplyWriter writer;
    for (const FindEntry& e : entries) {
        if (e.has_metadata) {
            writer.add(e.path, e.type, e.size, e.mtime_ns);
        } else {
            writer.add_path(e.path, e.type);
        }
    }
    std::string frame = encode_reply_text(writer.take(truncated), continues).value();
    frame.pop_back();
    return frame;
}

std::vector<FindEntry> tricky_entries() {
    constexpr auto kU64Max = std::numeric_limits<std::uint64_t>::max();
    constexpr auto kI64Min = std::numeric_limits<std::int64_t>::min();
    constexpr auto kI64Max = std::numeric_limits<std::int64_t>::max();
    std::vector<FindEntry> out;
    std::string every_control = "/";
    for (char c = 1; c < 0x20; ++c) every_control.push_back(c);
    for (const std::string& path :
         {"/plain"s, "/quote\"d\\back"s, "/new\nline"s, every_control, "/nul\0x"s, "/del\x7f"s,
          "/r\xC3\xA9sum\xC3\xA9 \xF0\x9F\x98\x80"s, "/bad\xFF"s, "/cut\xE2\x82"s, ""s,
          "/deep/" + std::string(255, 'n'), "/deep/" + std::string(254, 'n') + "\xFE"}) {
        out.push_back(FindEntry{path, 'f', 1, 1});
    }
    out.push_back(FindEntry{"/max", 'd', kU64Max, kI64Max});
    out.push_back(FindEntry{"/min", 'l', 0, kI64Min});
    out.push_back(FindEntry{"/neg", '?', 7, -1});
    for (const char t : "fdlpscb?"s) out.push_back(FindEntry{"/t", t, 3, 0});
    for (const char t : "fd"s) out.push_back(FindEntry{"/paths-only\xFF", t, 0, 0, false});
    return out;
}

TEST(FindReplyReader, ReadsWhatTheDaemonSendsLikeTheDom) {
    const auto entries = tricky_entries();
    for (const bool continues : {false, true}) {
        for (const bool truncated : {false, true}) {
            expect_read_like_dom(daemon_frame(entries, continues, truncated));
            expect_read_like_dom(daemon_frame({}, continues, truncated));
        }
    }
    // The DOM encoder's frames too (the daemon's other replies, and the same bytes anyway).
    const std::string dom = encode_reply(Reply{to_json(FindReply{entries, true}), true}).value();
    expect_read_like_dom(std::string_view(dom).substr(0, dom.size() - 1));
}

TEST(FindReplyReader, ReadsOtherSpellingsOfTheSameShapeLikeTheDom) {
    for (
        const std::string& frame : {
            R"({"parameters":{}})"s, R"({})"s,
            R"( { "continues" : false , "parameters" : { "truncated" : true , "entries" : [ ] } } )"s,
            "{\n\t\"parameters\":{\"entries\":[{\"type\":\"d\",\"size\":0,\"path\":\"/a\"}]}\r\n}"s,
            R"({"parameters":{"entries":[{}]}})"s,  // every field at its default
            R"({"parameters":{"entries":[{"path":"\/x\u00e9\u20AC\u0001\"\\\b\f\n\r\t"}]}})"s,
            R"({"parameters":{"entries":[{"path":{"b64":"L2H/Ygo="},"mtime_ns":-0}]}})"s,
            R"({"parameters":{"entries":[{"p\u0061th":"/escaped-key"}]}})"s,
            R"({"parameters":{"entries":[{"path":"/no-size","mtime_ns":5}]}})"s,  // metadata
            R"({"parameters":{"entries":[{"path":"/no-mtime","size":5}]}})"s,     // metadata
        }) {
        expect_read_like_dom(frame);
    }
}

TEST(FindReplyReader, DeclinesEverythingElse) {
    FindReplyReader reader;
    for (const std::string& frame : {
             R"({"error":"wsindex.Internal","parameters":{"message":"boom"}})"s,
             R"({"parameters":{"entries":[],"future":1}})"s,  // unknown fields: DOM skips
             R"({"parameters":{"entries":[{"path":"/a","x":null}]}})"s,
             R"({"parameters":{},"continues":true,"id":7})"s,
             R"({"parameters":{"entries":[{"path":{"b64":"L2E=","x":1}}]}})"s,
             R"({"parameters":{"entries":[]},"parameters":{"entries":[]}})"s,  // duplicates
             R"({"parameters":{"entries":[],"entries":[]}})"s,
             R"({"parameters":{"entries":[{"path":"/a","path":"/b"}]}})"s,
             R"({"parameters":{"entries":[{"size":5.0}]}})"s,  // floats: the DOM converts
             R"({"parameters":{"entries":[{"size":1e3}]}})"s,
             R"({"parameters":{"entries":[{"size":null}]}})"s,
             R"({"parameters":null})"s,
             R"({"parameters":{"entries":null}})"s,
             R"({"parameters":{"entries":[{"size":-1}]}})"s,  // errors in the DOM path
             R"({"parameters":{"entries":[{"size":01}]}})"s,
             R"({"parameters":{"entries":[{"size":18446744073709551616}]}})"s,
             R"({"parameters":{"entries":[{"mtime_ns":9223372036854775808}]}})"s,
             R"({"parameters":{"entries":[{"mtime_ns":-9223372036854775809}]}})"s,
             R"({"parameters":{"entries":[{"type":"x"}]}})"s,
             R"({"parameters":{"entries":[{"type":"ff"}]}})"s,
             R"({"parameters":{"entries":[{"path":{"b64":"L2E"}}]}})"s,
             R"({"parameters":{"entries":[{"path":{}}]}})"s,
             R"({"parameters":{"entries":[{"path":5}]}})"s,
             R"({"parameters":{"entries":["/a"]}})"s,
             R"({"parameters":{"entries":{}}})"s,
             R"({"parameters":{"truncated":"yes"}})"s,
             R"({"continues":1})"s,
             R"({"parameters":{"entries":[{"path":"\ud83d\ude00"}]}})"s,   // surrogates: nlohmann's
             "{\"parameters\":{\"entries\":[{\"path\":\"/bad\xFF\"}]}}"s,  // invalid UTF-8
             "{\"parameters\":{\"entries\":[{\"path\":\"/raw\ncontrol\"}]}}"s,
             R"({"parameters":{"entries":[{"path":"\x"}]}})"s,
             R"({"parameters":{"entries":[]}} x)"s,  // syntax errors
             R"({"parameters":{"entries":[]})"s,
             R"({"parameters":{"entries":[],}})"s,
             R"({"parameters":{"entries":[{"path":"/a"},]}})"s,
             R"([])"s,
             ""s,
             "\xEF\xBB\xBF{}"s,  // a BOM: nlohmann skips it
         }) {
        EXPECT_FALSE(reader.read(frame)) << frame;
    }
    // The message cap, as parse_reply applies it.
    Limits small;
    small.max_message_bytes = 10;
    FindReplyReader capped(small);
    EXPECT_TRUE(capped.read(R"({})"));
    EXPECT_FALSE(capped.read(R"({"parameters":{}})"));
}

// Whatever the reader accepts, the DOM path reads the same way: random damage to real frames
// (bytes deleted, inserted, replaced) never makes the two disagree. Fixed seed: reproducible.
TEST(FindReplyReader, NeverDisagreesWithTheDomOnDamagedFrames) {
    const std::string good = daemon_frame(tricky_entries(), true, true);
    const std::string alphabet =
        "{}[]:,\" \\/0123456789-.eE+truefalsn\x01\xFF\xC3\xA9"
        "abu";
    std::mt19937_64 rng(5);
    FindReplyReader reader;
    int accepted = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string frame = good;
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < edits; ++k) {
            const std::size_t at = rng() % frame.size();
            const char c = alphabet[rng() % alphabet.size()];
            switch (rng() % 3) {
                case 0:
                    frame.erase(at, 1);
                    break;
                case 1:
                    frame.insert(frame.begin() + static_cast<std::ptrdiff_t>(at), c);
                    break;
                default:
                    frame[at] = c;
                    break;
            }
        }
        const auto fast = fast_read(reader, frame);
        if (!fast) continue;
        ++accepted;
        const auto dom = dom_read(frame);
        ASSERT_TRUE(dom.has_value()) << "accepted what the DOM path refuses: " << frame;
        expect_equal(*fast, *dom, frame);
        if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(accepted, 1000);  // the damage hits paths and numbers often enough to compare
}

TEST(FindReplyReader, ReusesItsEntriesFromFrameToFrame) {
    FindReplyReader reader;
    ASSERT_TRUE(reader.read(daemon_frame(tricky_entries(), true, false)));
    EXPECT_EQ(reader.entries().size(), tricky_entries().size());
    EXPECT_TRUE(reader.continues());
    ASSERT_TRUE(reader.read(daemon_frame({FindEntry{"/one", 'f', 1, 2}}, false, true)));
    ASSERT_EQ(reader.entries().size(), 1u);
    EXPECT_EQ(reader.entries()[0].path, "/one");
    EXPECT_FALSE(reader.continues());
    EXPECT_TRUE(reader.truncated());
    ASSERT_TRUE(reader.read(R"({"parameters":{"entries":[{}]}})"));
    EXPECT_EQ(reader.entries()[0].path, "");  // defaults, not the previous frame's values
    EXPECT_EQ(reader.entries()[0].type, '?');
    EXPECT_EQ(reader.entries()[0].size, 0u);
    EXPECT_FALSE(reader.truncated());
}

}  // namespace
}  // namespace wsindex::ipc
