// Lossless byte encoding: UTF-8 validation agrees with nlohmann, every byte string round-trips.
#include "ipc/bytes_codec.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ipc/base64.hpp"
#include "ipc/protocol.hpp"
#include "ipc/utf8.hpp"

namespace wsindex::ipc {
namespace {

using nlohmann::json;

// Through the whole wire path: encode, dump, parse, decode.
std::string round_trip(const std::string& bytes) {
    const json message{{"path", encode_bytes(bytes)}};
    const auto text = dump_json(message);
    EXPECT_TRUE(text.has_value()) << "dump threw for an encoded value";
    if (!text) return {};
    EXPECT_EQ(text->find('\0'), std::string::npos) << "a raw NUL would break framing";
    const json parsed = json::parse(*text);
    auto decoded = decode_bytes(parsed.at("path"), "path");
    EXPECT_TRUE(decoded.ok());
    return decoded ? decoded.value() : std::string();
}

bool nlohmann_accepts(const std::string& bytes) { return dump_json(json(bytes)).has_value(); }

TEST(Utf8, AgreesWithNlohmannOnEverySingleAndPairOfBytes) {
    for (int a = 0; a < 256; ++a) {
        const std::string one(1, static_cast<char>(a));
        ASSERT_EQ(is_valid_utf8(one), nlohmann_accepts(one)) << "byte " << a;
        for (int b = 0x80; b < 256; b += 7) {
            const std::string two{static_cast<char>(a), static_cast<char>(b)};
            ASSERT_EQ(is_valid_utf8(two), nlohmann_accepts(two)) << a << "," << b;
        }
    }
}

TEST(Utf8, AgreesWithNlohmannOnRandomBytes) {
    std::mt19937 rng(12345);
    std::uniform_int_distribution<int> len(0, 12);
    // Bias toward bytes that form (and almost form) multi-byte sequences.
    const std::vector<unsigned char> interesting{
        0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
        0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
    std::uniform_int_distribution<std::size_t> pick(0, interesting.size() - 1);
    for (int i = 0; i < 30000; ++i) {
        std::string s(static_cast<std::size_t>(len(rng)), '\0');
        for (auto& c : s) c = static_cast<char>(interesting[pick(rng)]);
        ASSERT_EQ(is_valid_utf8(s), nlohmann_accepts(s)) << "case " << i;
    }
}

TEST(Utf8, KnownInvalidSequences) {
    for (const std::string& s :
         std::vector<std::string>{"\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80",
                                  "\xED\xBF\xBF", "\xF0\x80\x80\x80", "\xF4\x90\x80\x80",
                                  "\xF5\x80\x80\x80", "\xFF", "\xC3", "\xE2\x82", "\x80",
                                  "a\xFE"
                                  "b"}) {
        EXPECT_FALSE(is_valid_utf8(s)) << s;
    }
    for (const std::string& s :
         std::vector<std::string>{"", "plain", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                  "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF", std::string("a\0b", 3)}) {
        EXPECT_TRUE(is_valid_utf8(s)) << s;
    }
}

TEST(Utf8, SanitizeReplacesMaximalInvalidSubsequences) {
    EXPECT_EQ(sanitize_utf8("a\xFF"
                            "b"),
              "a\xEF\xBF\xBD"
              "b");
    EXPECT_EQ(sanitize_utf8("\xE2\x82"
                            "x"),
              "\xEF\xBF\xBD"
              "x");  // one U+FFFD for the truncated prefix
    EXPECT_EQ(sanitize_utf8("\xC3\xA9"), "\xC3\xA9");
    EXPECT_TRUE(is_valid_utf8(sanitize_utf8("\xED\xA0\x80\xF5\xC0")));
}

TEST(Base64, Rfc4648Vectors) {
    const std::vector<std::pair<std::string, std::string>> vectors{{"", ""},
                                                                   {"f", "Zg=="},
                                                                   {"fo", "Zm8="},
                                                                   {"foo", "Zm9v"},
                                                                   {"foob", "Zm9vYg=="},
                                                                   {"fooba", "Zm9vYmE="},
                                                                   {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, encoded] : vectors) {
        EXPECT_EQ(base64_encode(plain), encoded);
        EXPECT_EQ(base64_decode(encoded), plain);
    }
}

TEST(Base64, RejectsMalformedInput) {
    for (const std::string& bad : std::vector<std::string>{
             "Zg", "Zg=", "Z===", "Zm9v!A==", "Zh==", "Zm9=", "=Zg=", "Zg==Zg==", "Zm 9v"}) {
        EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
    }
}

TEST(BytesCodec, LogBytesKeepsANameOnOneLine) {
    // A name cannot end the log line early or forge the next one.
    EXPECT_EQ(log_bytes("a\n2026-12-05 00:00:00.000 error forged"),
              "a\\n2026-12-05 00:00:00.000 error forged");
    EXPECT_EQ(log_bytes("tab\there\r\x01\x7f"), "tab\\there\\x0d\\x01\\x7f");
    EXPECT_EQ(log_bytes("caf\xc3\xa9 \\ /x"), "caf\xc3\xa9 \\ /x");  // kept as it is
    // Not UTF-8: each byte as it is in the name.
    EXPECT_EQ(log_bytes("bad\xff\xc3(\xe2\x82"), "bad\\xff\\xc3(\\xe2\\x82");
    // Terminal escapes: ESC, and CSI as a C1 control in UTF-8; line separators.
    EXPECT_EQ(log_bytes("\x1b[2J\xc2\x9b"
                        "31m"),
              "\\x1b[2J\\xc2\\x9b"
              "31m");
    EXPECT_EQ(log_bytes("a\xe2\x80\xa8"
                        "b\xe2\x80\xa9"),
              "a\\xe2\\x80\\xa8b\\xe2\\x80\\xa9");
    EXPECT_EQ(log_bytes("\xc2\xa0\xf0\x9f\x98\x80"), "\xc2\xa0\xf0\x9f\x98\x80");  // NBSP, emoji
    EXPECT_EQ(log_bytes(std::string("nul\0x", 5)), "nul\\x00x");
}

// The log sink applies log_bytes to whole messages that may hold its own output: nothing is
// escaped twice.
TEST(BytesCodec, LogBytesIsIdempotent) {
    for (const std::string& s : {std::string("a\nb\tc\x1b[31m\xff\xc2\x9b\\x41"),
                                 std::string("plain /path"), std::string("\xe2\x80\xa8\x7f")}) {
        const std::string once = log_bytes(s);
        EXPECT_EQ(log_bytes(once), once) << once;
    }
}

TEST(BytesCodec, ValidUtf8IsAPlainString) {
    EXPECT_EQ(encode_bytes("/home/ann/r\xC3\xA9sum\xC3\xA9.txt"),
              json("/home/ann/r\xC3\xA9sum\xC3\xA9.txt"));
    EXPECT_EQ(encode_bytes("line\nbreak"), json("line\nbreak"));
}

TEST(BytesCodec, InvalidUtf8IsBase64Object) {
    const json encoded = encode_bytes("bad\xFFname");
    ASSERT_TRUE(encoded.is_object());
    EXPECT_EQ(encoded.at("b64"), base64_encode("bad\xFFname"));
}

TEST(BytesCodec, EveryByteValueAlone) {
    for (int b = 0; b < 256; ++b) {
        const std::string s(1, static_cast<char>(b));
        ASSERT_EQ(round_trip(s), s) << "byte " << b;
    }
}

TEST(BytesCodec, AllByteValuesInOneString) {
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    EXPECT_EQ(round_trip(all), all);
    std::string reversed(all.rbegin(), all.rend());
    EXPECT_EQ(round_trip(reversed), reversed);
}

TEST(BytesCodec, OddNamesRoundTrip) {
    for (const std::string& s : std::vector<std::string>{
             std::string("\n"), std::string("a\nb\n"), std::string("\t\r\x1b[31m"),
             std::string("\"quoted\" \\back\\"), std::string("\xC0\x80"),
             std::string("\xED\xA0\x80"), std::string("\xE2\x82"),
             std::string("mixed \xC3\xA9 and \xFF"), std::string("-rf"),
             std::string(" leading and trailing "), std::string("\x7F")}) {
        EXPECT_EQ(round_trip(s), s);
    }
}

TEST(BytesCodec, MaximalNamesAndLongPaths) {
    const std::string name255(255, 'x');
    EXPECT_EQ(round_trip(name255), name255);
    std::string name255_bad(255, '\xFE');
    EXPECT_EQ(round_trip(name255_bad), name255_bad);
    std::string name255_utf8;  // 85 three-byte characters
    for (int i = 0; i < 85; ++i) name255_utf8 += "\xE2\x82\xAC";
    EXPECT_EQ(round_trip(name255_utf8), name255_utf8);

    std::string long_path;
    while (long_path.size() < 8000) long_path += "/" + name255.substr(0, 200);
    long_path.resize(8000);
    EXPECT_EQ(round_trip(long_path), long_path);
    std::string long_bad = long_path;
    long_bad[4000] = '\x80';
    EXPECT_EQ(round_trip(long_bad), long_bad);
}

TEST(BytesCodec, RandomByteStringsRoundTrip) {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> len(0, 300);
    for (int i = 0; i < 5000; ++i) {
        std::string s(static_cast<std::size_t>(len(rng)), '\0');
        for (auto& c : s) c = static_cast<char>(byte(rng));
        ASSERT_EQ(round_trip(s), s);
    }
}

TEST(BytesCodec, ClientsMayAlwaysSendBase64) {
    auto decoded = decode_bytes(json{{"b64", base64_encode("plain")}}, "path");
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(decoded.value(), "plain");
}

TEST(BytesCodec, WrongShapesNameTheField) {
    for (const json& bad :
         std::vector<json>{json(42), json::array(), json{{"b64", 5}}, json{{"other", "x"}},
                           json{{"b64", "not base64!"}}, json(true)}) {
        auto decoded = decode_bytes(bad, "under");
        ASSERT_FALSE(decoded.ok()) << bad.dump();
        EXPECT_EQ(decoded.error().kind, ErrorKind::InvalidParameter);
        EXPECT_NE(decoded.error().message.find("'under'"), std::string::npos)
            << decoded.error().message;
    }
}

}  // namespace
}  // namespace wsindex::ipc
