// FrameDecoder: split and merged reads, empty messages, the size cap without unbounded buffering.
#include "ipc/frame_decoder.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace wsindex::ipc {
namespace {

using namespace std::string_literals;

TEST(FrameDecoder, OneMessage) {
    FrameDecoder decoder(100);
    std::vector<std::string> out;
    ASSERT_TRUE(decoder.feed("{\"a\":1}\0"s, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], "{\"a\":1}");
    EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(FrameDecoder, MergedMessagesInOneRead) {
    FrameDecoder decoder(100);
    std::vector<std::string> out;
    ASSERT_TRUE(decoder.feed("one\0two\0\0three\0four"s, out));
    EXPECT_EQ(out, (std::vector<std::string>{"one", "two", "", "three"}));
    EXPECT_EQ(decoder.buffered(), 4u);
    ASSERT_TRUE(decoder.feed("\0"s, out));
    EXPECT_EQ(out.back(), "four");
}

TEST(FrameDecoder, SplitByteByByte) {
    const std::string stream = "first message\0second\0third one\0"s;
    FrameDecoder decoder(100);
    std::vector<std::string> out;
    for (const char c : stream) ASSERT_TRUE(decoder.feed(std::string_view(&c, 1), out));
    EXPECT_EQ(out, (std::vector<std::string>{"first message", "second", "third one"}));
}

TEST(FrameDecoder, RandomSplitsGiveTheSameMessages) {
    std::vector<std::string> messages;
    std::string stream;
    std::mt19937 rng(3);
    for (int i = 0; i < 200; ++i) {
        std::string m(static_cast<std::size_t>(rng() % 300), 'x');
        for (auto& c : m) c = static_cast<char>(1 + rng() % 255);  // anything but NUL
        messages.push_back(m);
        stream += m;
        stream += '\0';
    }
    for (int trial = 0; trial < 20; ++trial) {
        FrameDecoder decoder(300);
        std::vector<std::string> out;
        std::size_t pos = 0;
        while (pos < stream.size()) {
            const std::size_t n = std::min<std::size_t>(1 + rng() % 700, stream.size() - pos);
            ASSERT_TRUE(decoder.feed(std::string_view(stream).substr(pos, n), out));
            pos += n;
        }
        ASSERT_EQ(out, messages);
    }
}

TEST(FrameDecoder, ExactlyAtTheCapIsAccepted) {
    FrameDecoder decoder(10);
    std::vector<std::string> out;
    ASSERT_TRUE(decoder.feed(std::string(10, 'a') + '\0', out));
    ASSERT_EQ(out.size(), 1u);
}

TEST(FrameDecoder, OversizeFailsBeforeTheNulAndStopsBuffering) {
    FrameDecoder decoder(10);
    std::vector<std::string> out;
    ASSERT_TRUE(decoder.feed(std::string(6, 'a'), out));
    ASSERT_TRUE(decoder.feed(std::string(4, 'a'), out));
    EXPECT_EQ(decoder.buffered(), 10u);
    EXPECT_FALSE(decoder.feed("a", out));  // 11 bytes, no NUL yet: already too large
    EXPECT_TRUE(decoder.failed());
    EXPECT_EQ(decoder.buffered(), 0u);
    EXPECT_FALSE(decoder.feed("\0ok\0"s, out));  // stays failed: no resynchronisation
    EXPECT_TRUE(out.empty());
}

TEST(FrameDecoder, HugeReadWithoutNulIsRejectedAtOnce) {
    FrameDecoder decoder(1024);
    std::vector<std::string> out;
    const std::string flood(1 << 20, 'x');
    EXPECT_FALSE(decoder.feed(flood, out));
    EXPECT_LE(decoder.buffered(), 1024u);
}

TEST(FrameDecoder, MessagesBeforeAnOversizeOneAreDelivered) {
    FrameDecoder decoder(5);
    std::vector<std::string> out;
    EXPECT_FALSE(decoder.feed("ok\0also\0toolong\0"s, out));
    EXPECT_EQ(out, (std::vector<std::string>{"ok", "also"}));
}

}  // namespace
}  // namespace wsindex::ipc
