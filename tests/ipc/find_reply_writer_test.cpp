// FindReplyWriter and json_writer: the text written without a DOM is the text nlohmann writes
// for the same FindReply (byte for byte), for every odd name and extreme number.
#include "ipc/find_reply_writer.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ipc/bytes_codec.hpp"
#include "ipc/json_writer.hpp"
#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"

namespace wsindex::ipc {
namespace {

using nlohmann::json;
using namespace std::string_literals;

// What the DOM path sends for `reply`.
std::string dom_text(const FindReply& reply) {
    const auto text = dump_json(to_json(reply));
    EXPECT_TRUE(text.has_value());
    return text.value_or("");
}

std::string writer_text(const FindReply& reply) {
    FindReplyWriter writer;
    for (const FindEntry& e : reply.entries) {
        if (e.has_metadata) {
            writer.add(e.path, e.type, e.size, e.mtime_ns);
        } else {
            writer.add_path(e.path, e.type);
        }
    }
    EXPECT_EQ(writer.entries(), reply.entries.size());
    return writer.take(reply.truncated);
}

// Byte-identical, and (a weaker check that still holds if key order ever changed) the same
// JSON value, which decodes back to the same entries.
void expect_same(const FindReply& reply, bool decode = true) {
    const std::string text = writer_text(reply);
    EXPECT_EQ(text, dom_text(reply));
    const json parsed = json::parse(text);
    EXPECT_EQ(parsed, to_json(reply));
    if (!decode) return;
    auto decoded = from_json<FindReply>(parsed);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    ASSERT_EQ(decoded->entries.size(), reply.entries.size());
    for (std::size_t i = 0; i < reply.entries.size(); ++i) {
        EXPECT_EQ(decoded->entries[i].path, reply.entries[i].path) << i;
        EXPECT_EQ(decoded->entries[i].size, reply.entries[i].size) << i;
        EXPECT_EQ(decoded->entries[i].mtime_ns, reply.entries[i].mtime_ns) << i;
        EXPECT_EQ(decoded->entries[i].has_metadata, reply.entries[i].has_metadata) << i;
    }
    EXPECT_EQ(decoded->truncated, reply.truncated);
}

FindEntry entry(std::string path, char type = 'f', std::uint64_t size = 1,
                std::int64_t mtime_ns = 1700000000000000000) {
    return FindEntry{std::move(path), type, size, mtime_ns};
}

TEST(FindReplyWriter, EmptyAndTruncatedRepliesMatchTheDom) {
    expect_same(FindReply{});
    FindReply truncated;
    truncated.truncated = true;
    expect_same(truncated);
    truncated.entries.push_back(entry("/a"));
    expect_same(truncated);
}

// Entries without metadata (a paths-only find): path and type only, as to_json writes them;
// they decode with has_metadata false, beside entries that have it.
TEST(FindReplyWriter, PathOnlyEntriesMatchTheDom) {
    FindReply reply;
    for (const std::string& path : {"/plain"s, "/bad\xFF"s, "/new\nline"s, ""s}) {
        FindEntry e{path, 'd'};
        e.has_metadata = false;
        e.size = 0;
        e.mtime_ns = 0;
        reply.entries.push_back(e);
    }
    reply.entries.push_back(entry("/with-metadata"));
    expect_same(reply);
    EXPECT_EQ(writer_text(reply).find("size"), writer_text(reply).rfind("size"));  // once
    reply.truncated = true;
    expect_same(reply);
}

TEST(FindReplyWriter, TrickyPathsMatchTheDom) {
    FindReply reply;
    for (const std::string& path : {
             "/plain/file.txt"s,
             "/quote\"d/and\\back\\slash"s,
             "/new\nline"s,
             "/tab\tcr\rff\fbs\b"s,
             "/nul\0in the middle"s,  // valid UTF-8: written as \u0000
             "/del\x7f"s,             // DEL is not escaped by nlohmann either
             "/r\xC3\xA9sum\xC3\xA9 \xF0\x9F\x98\x80 \xE2\x82\xAC"s,  // é, an emoji, €
             "/slash/\u2028/\u2029"s,  // passed through as UTF-8, not escaped
             "/bad\xFF"s,              // invalid UTF-8: {"b64": ...}
             "/lone\x80"s,
             "/overlong\xC0\xAF"s,
             "/surrogate\xED\xA0\x80"s,
             "/cut\xE2\x82"s,
             "/above\xF4\x90\x80\x80"s,
             "\xFF"s,
             ""s,
         }) {
        reply.entries.push_back(entry(path));
    }
    std::string every_control = "/";
    for (char c = 1; c < 0x20; ++c) every_control.push_back(c);
    reply.entries.push_back(entry(every_control));
    // A 255-byte name (NAME_MAX) below a deep path, valid and invalid.
    reply.entries.push_back(entry("/deep/" + std::string(255, 'n')));
    reply.entries.push_back(entry("/deep/" + std::string(254, 'n') + "\xFE"));
    reply.entries.push_back(entry(std::string(4000, '/') + std::string(255, '"')));
    expect_same(reply);
}

TEST(FindReplyWriter, InvalidPathsUseTheBase64ObjectOfEncodeBytes) {
    FindReplyWriter writer;
    writer.add(
        "/a\xFF"
        "b\n",
        'f', 5, 0);
    const json parsed = json::parse(writer.take());
    EXPECT_EQ(parsed["entries"][0]["path"], encode_bytes("/a\xFF"
                                                         "b\n"));
    EXPECT_EQ(parsed["entries"][0]["path"], json({{"b64", "L2H/Ygo="}}));  // docs/protocol.md
}

TEST(FindReplyWriter, ExtremeNumbersMatchTheDom) {
    constexpr auto kU64Max = std::numeric_limits<std::uint64_t>::max();
    constexpr auto kI64Min = std::numeric_limits<std::int64_t>::min();
    constexpr auto kI64Max = std::numeric_limits<std::int64_t>::max();
    FindReply reply;
    reply.entries.push_back(entry("/zero", 'f', 0, 0));
    reply.entries.push_back(entry("/max", 'f', kU64Max, kI64Max));
    reply.entries.push_back(entry("/min", 'f', kU64Max - 1, kI64Min));
    reply.entries.push_back(entry("/neg", 'f', 9, -1));
    reply.entries.push_back(entry("/before1970", 'f', 10, -1234567890123456789));
    reply.entries.push_back(entry("/big", 'f', std::uint64_t{1} << 63, 1));
    expect_same(reply);
}

TEST(FindReplyWriter, EveryTypeLetterMatchesTheDom) {
    FindReply reply;
    for (const char type : "fdlpscb?"s) reply.entries.push_back(entry("/t", type));
    // Not letters a daemon sends, but to_json writes them too: the escapes must agree.
    for (const char type : "\"\\\n\x01"s) reply.entries.push_back(entry("/t", type));
    expect_same(reply, false);  // (from_json refuses those letters)
}

TEST(FindReplyWriter, ANonAsciiTypeByteIsRefusedLikeTheDom) {
    FindReplyWriter writer;
    writer.add("/x", '\xE9', 1, 1);
    // The DOM cannot be dumped; the text cannot be encoded into a frame: both Internal.
    EXPECT_FALSE(dump_json(to_json(FindReply{{entry("/x", '\xE9')}, false})).has_value());
    auto frame = encode_reply_text(writer.take(), false);
    ASSERT_FALSE(frame.ok());
    EXPECT_EQ(frame.error().kind, ErrorKind::Internal);
}

TEST(FindReplyWriter, TakeStartsAFreshBatch) {
    FindReplyWriter writer;
    writer.add("/one", 'f', 1, 1);
    writer.add("/two", 'd', 2, 2);
    const std::string first = writer.take();
    EXPECT_EQ(writer.entries(), 0u);
    writer.add("/three", 'l', 3, 3);
    const std::string second = writer.take(true);
    EXPECT_EQ(first,
              dom_text(FindReply{{entry("/one", 'f', 1, 1), entry("/two", 'd', 2, 2)}, false}));
    EXPECT_EQ(second, dom_text(FindReply{{entry("/three", 'l', 3, 3)}, true}));
    EXPECT_EQ(writer.take(), dom_text(FindReply{}));
}

TEST(FindReplyWriter, RandomByteStringsMatchTheDom) {
    // Mostly-valid names with odd bytes sprinkled in: every escaping and encoding branch, in
    // any combination. Fixed seed: a failure reproduces.
    std::mt19937_64 rng(20261203);
    const std::string alphabet =
        "abc/.-_ \"\\\n\t\x01\x1f\x7f"
        "\xC3\xA9"
        "\xE2\x82\xAC"
        "\xFF\x80\xED";
    for (int round = 0; round < 50; ++round) {
        FindReply reply;
        for (int i = 0; i < 40; ++i) {
            std::string path = "/";
            const std::size_t len = rng() % 64;
            for (std::size_t k = 0; k < len; ++k) path.push_back(alphabet[rng() % alphabet.size()]);
            reply.entries.push_back(
                entry(path, "fdl"[rng() % 3], rng(), static_cast<std::int64_t>(rng())));
        }
        reply.truncated = round % 2 == 1;
        expect_same(reply);
    }
}

TEST(JsonWriter, EveryAsciiByteIsEscapedAsNlohmannEscapesIt) {
    for (int c = 0; c < 0x80; ++c) {
        const std::string one(1, static_cast<char>(c));
        std::string out;
        append_json_string(out, one);
        EXPECT_EQ(out, dump_json(json(one)).value()) << "byte " << c;
    }
}

TEST(JsonWriter, BytesAreWrittenAsEncodeBytesEncodesThem) {
    for (const std::string& bytes : {"/ok"s, "/\xFF"s, ""s, "\xC3\xA9"s, "\xC3"s}) {
        std::string out;
        append_json_bytes(out, bytes);
        EXPECT_EQ(out, dump_json(encode_bytes(bytes)).value());
    }
}

TEST(EncodeReplyText, FramesTheSameAsTheDomEncoder) {
    const FindReply reply{{entry("/a\"b"), entry("/c\xFF")}, true};
    for (const bool continues : {false, true}) {
        auto from_dom = encode_reply(Reply{to_json(reply), continues});
        auto from_text = encode_reply_text(writer_text(reply), continues);
        ASSERT_TRUE(from_dom.ok());
        ASSERT_TRUE(from_text.ok());
        EXPECT_EQ(from_text.value(), from_dom.value());
    }
}

TEST(EncodeReplyText, RefusesInvalidUtf8AndOversizeTextLikeTheDomEncoder) {
    auto bad = encode_reply_text("{\"path\":\"bad\xFF\"}", false);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().kind, ErrorKind::Internal);
    Limits limits;
    limits.max_message_bytes = 100;
    auto big = encode_reply_text("{\"x\":\"" + std::string(200, 'a') + "\"}", true, limits);
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.error().kind, ErrorKind::MessageTooLarge);
    // Exactly at the cap is allowed, one byte over is not (the envelope counts, the NUL not).
    const std::string head = R"({"parameters":)";
    const std::string fits = "{\"x\":\"" + std::string(100 - head.size() - 1 - 8, 'a') + "\"}";
    ASSERT_EQ(head.size() + fits.size() + 1, 100u);
    EXPECT_TRUE(encode_reply_text(fits, false, limits).ok());
    EXPECT_FALSE(encode_reply_text(fits + " ", false, limits).ok());
}

}  // namespace
}  // namespace wsindex::ipc
