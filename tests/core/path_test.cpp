// core/path: how index paths relate, byte-wise.
#include "core/path.hpp"

#include <gtest/gtest.h>

#include <string>

namespace wsindex::core {
namespace {

TEST(Path, AtOrBelowMatchesWholeComponentsOnly) {
    EXPECT_TRUE(at_or_below("/a/b", "/a"));
    EXPECT_TRUE(at_or_below("/a", "/a"));
    EXPECT_TRUE(at_or_below("/a", "/"));
    EXPECT_TRUE(at_or_below("/", "/"));
    EXPECT_FALSE(at_or_below("/ab", "/a"));
    EXPECT_FALSE(at_or_below("/a", "/a/b"));
    EXPECT_FALSE(at_or_below("", "/"));
    EXPECT_FALSE(at_or_below("relative", "/"));
    // Bytes, not text: a newline or an invalid byte is a byte like any other.
    const std::string odd = std::string("/x\n\xff");
    EXPECT_TRUE(at_or_below(odd + "/y", odd));
    EXPECT_FALSE(at_or_below(odd + "z", odd));
}

TEST(Path, StrictlyBelowExcludesTheDirectoryItself) {
    EXPECT_TRUE(strictly_below("/a/b", "/a"));
    EXPECT_FALSE(strictly_below("/a", "/a"));
    EXPECT_TRUE(strictly_below("/a", "/"));
    EXPECT_FALSE(strictly_below("/", "/"));
    EXPECT_FALSE(strictly_below("/ab", "/a"));
}

TEST(Path, ChildPathJoinsWithOneSlash) {
    EXPECT_EQ(child_path("/a", "b"), "/a/b");
    EXPECT_EQ(child_path("/", "b"), "/b");
    EXPECT_EQ(child_path("/a/", "b"), "/a/b");
}

}  // namespace
}  // namespace wsindex::core
