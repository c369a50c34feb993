// The byte encodings of the fleet code: COPY text rows and the LIKE text of a name fragment.
#include "fleet/copy_text.hpp"

#include <gtest/gtest.h>

#include "fleet/queries.hpp"
#include "fleet/schema.hpp"

namespace wsindex::fleet {
namespace {

TEST(CopyRow, BytesAreHexAndTextIsEscaped) {
    std::string out;
    CopyRow row(&out);
    row.text("a\tb\\c\nd").bytes(std::string("x\n\xff\0", 4)).integer(-5).null();
    row.end();
    EXPECT_EQ(out, "a\\tb\\\\c\\nd\t\\\\x780aff00\t-5\t\\N\n");
}

TEST(EscapedLike, MatchesWhatEncodeEscapeGives) {
    // encode(name, 'escape'): NUL and bytes >= 0x80 as \ooo, a backslash doubled; then LIKE's
    // own escapes for '\', '%' and '_'.
    EXPECT_EQ(escape_encoded_like("report"), "report");
    EXPECT_EQ(escape_encoded_like("50%_a"), "50\\%\\_a");
    EXPECT_EQ(escape_encoded_like("\xff"), "\\\\377");
    EXPECT_EQ(escape_encoded_like("a\\b"), "a\\\\\\\\b");
}

TEST(PartitionName, PlainAndStablePerHost) {
    EXPECT_EQ(partition_name("entries", "web-17"), partition_name("entries", "web-17"));
    EXPECT_NE(partition_name("entries", "web-17"), partition_name("entries", "web-18"));
    const std::string name = partition_name("entries", "a \"quoted\"/host");
    EXPECT_EQ(name.size(), std::string("entries_h_").size() + 16);
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789"), std::string::npos);
}

}  // namespace
}  // namespace wsindex::fleet
