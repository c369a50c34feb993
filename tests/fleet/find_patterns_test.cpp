// find's glob and POSIX regex patterns as PostgreSQL regular expressions (no server needed).
#include "fleet/find_patterns.hpp"

#include <gtest/gtest.h>

namespace wsindex::fleet {
namespace {

std::string glob(std::string_view pattern) {
    std::string out;
    std::string error;
    EXPECT_TRUE(glob_to_pg_regex(pattern, &out, &error)) << error;
    return out;
}

TEST(FleetFindPatterns, GlobIsAnchoredWithEveryOtherByteEscaped) {
    EXPECT_EQ(glob("*.txt"), "^.*\\u002etxt$");
    EXPECT_EQ(glob("a\\b"), "^a\\u005cb$");  // no escape character in a GLOB
    EXPECT_EQ(glob("\xc3\xa9"), "^\\u00c3\\u00a9$");
    EXPECT_EQ(glob("[a-c]"), "^[a-c]$");
    EXPECT_EQ(glob("[]x-]"), "^[\\u005dx\\u002d]$");  // ']' first and '-' last are members
    EXPECT_EQ(glob("[z-a]"), "^[z]$");  // as SQLite: z, then a range that holds nothing
    EXPECT_EQ(glob("x["), "a^");        // unterminated: matches nothing
    EXPECT_NE(glob("?").find("(?:[\\u00c0-\\u00ff]"), std::string::npos);
    EXPECT_NE(glob("[^a]").find("(?![a])"), std::string::npos);
    std::string out;
    std::string error;
    EXPECT_FALSE(glob_to_pg_regex("[\xc3\xa9]", &out, &error));
    EXPECT_NE(error, "");
}

TEST(FleetFindPatterns, PosixRegexBecomesAnEquivalentAre) {
    EXPECT_EQ(posix_regex_to_pg("/[^/]*\\.log$"), "/[^/]*\\u002elog$");
    EXPECT_EQ(posix_regex_to_pg("[\\]"), "[\\u005c]");  // a literal backslash in POSIX
    EXPECT_EQ(posix_regex_to_pg("\\<a\\>\\bb"), "\\ma\\M\\yb");
    EXPECT_EQ(posix_regex_to_pg("\\d"), "d");  // glibc: an escaped ordinary letter is itself
    EXPECT_EQ(posix_regex_to_pg("(a)\\1"), "(a)\\1");
    EXPECT_EQ(posix_regex_to_pg("[[:alpha:]\xff]"), "[[:alpha:]\\u00ff]");
    EXPECT_EQ(posix_regex_to_pg("caf\xc3\xa9"), "caf\\u00c3\\u00a9");
}

}  // namespace
}  // namespace wsindex::fleet
