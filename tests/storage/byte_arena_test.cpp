// ByteArena: every stored piece reads back intact while later pieces (short ones filling blocks,
// long ones in blocks of their own) are added around it.
#include "storage/byte_arena.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace wsindex::storage {
namespace {

std::string piece(std::size_t i) {
    // Mostly short paths; every 97th one past kLongPiece, every 89th empty.
    if (i % 89 == 0) return {};
    const std::size_t size = i % 97 == 0 ? ByteArena::kLongPiece + i : 1 + i % 300;
    std::string s(size, '\0');
    for (std::size_t k = 0; k < size; ++k) s[k] = static_cast<char>((i * 131 + k) & 0xff);
    return s;
}

TEST(ByteArena, PiecesStayIntactAcrossBlocks) {
    ByteArena arena;
    std::vector<std::string> expected;
    std::vector<std::string_view> views;
    for (std::size_t i = 0; i < 20000; ++i) {
        expected.push_back(piece(i) + (i % 2 == 0 ? "/" : ""));
        views.push_back(arena.store(piece(i), i % 2 == 0 ? "/" : ""));
    }
    // ~3 MB of short pieces: many blocks, so pieces were stored across block boundaries and
    // long ones were slotted in before the open block.
    EXPECT_GT(arena.blocks(), 12u);
    for (std::size_t i = 0; i < views.size(); ++i) {
        ASSERT_EQ(views[i], expected[i]) << "piece " << i;
    }
    // Distinct storage: no two non-empty views overlap.
    EXPECT_NE(views[1].data(), views[2].data());
    arena.clear();
    EXPECT_EQ(arena.blocks(), 0u);
    EXPECT_EQ(arena.store("abc", "/"), "abc/");
}

}  // namespace
}  // namespace wsindex::storage
