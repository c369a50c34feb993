// Tests of the absolute-path text helpers the daemon and wsctl share.
#include "ipc/path_text.hpp"

#include <gtest/gtest.h>

namespace wsindex::ipc {
namespace {

TEST(PathText, NormalFormCheck) {
    EXPECT_TRUE(is_normalized_absolute("/"));
    EXPECT_TRUE(is_normalized_absolute("/a/b.c/..d"));
    EXPECT_TRUE(is_normalized_absolute("/a/..."));
    EXPECT_FALSE(is_normalized_absolute(""));
    EXPECT_FALSE(is_normalized_absolute("a"));
    EXPECT_FALSE(is_normalized_absolute("/a/"));
    EXPECT_FALSE(is_normalized_absolute("//a"));
    EXPECT_FALSE(is_normalized_absolute("/a/./b"));
    EXPECT_FALSE(is_normalized_absolute("/a/../b"));
    EXPECT_FALSE(is_normalized_absolute("/.."));
}

TEST(PathText, LexicallyNormalWithoutResolvingSymlinks) {
    EXPECT_EQ(lexically_normal("a/b", "/home/u"), "/home/u/a/b");
    EXPECT_EQ(lexically_normal(".", "/home/u"), "/home/u");
    EXPECT_EQ(lexically_normal("..", "/home/u"), "/home");
    EXPECT_EQ(lexically_normal("../../../..", "/home/u"), "/");
    EXPECT_EQ(lexically_normal("/x//y/./z/", "/ignored"), "/x/y/z");
    EXPECT_EQ(lexically_normal("link/..", "/d"), "/d");
    EXPECT_EQ(lexically_normal("/", "/d"), "/");
    EXPECT_EQ(lexically_normal("", "/d"), "/d");
    EXPECT_EQ(lexically_normal("bad\xff/n\nl", "/d"), "/d/bad\xff/n\nl");
    EXPECT_EQ(lexically_normal("...", "/d"), "/d/...");
    EXPECT_EQ(lexically_normal("/a/./b//c/../d/"), "/a/b/d");
    EXPECT_EQ(lexically_normal("/../.."), "/");
}

TEST(PathText, NormalisedPathsPassTheCheck) {
    for (const char* p : {"/a/./b//c/../d/", "x/../../y", "", "/", "//", "a/.../b/."}) {
        EXPECT_TRUE(is_normalized_absolute(lexically_normal(p, "/cwd"))) << p;
    }
}

TEST(PathText, Parent) {
    EXPECT_EQ(parent_path("/a/b").value(), "/a");
    EXPECT_EQ(parent_path("/a").value(), "/");
    EXPECT_FALSE(parent_path("/").has_value());
    EXPECT_FALSE(parent_path("").has_value());
    EXPECT_FALSE(parent_path("ab").has_value());
}

}  // namespace
}  // namespace wsindex::ipc
