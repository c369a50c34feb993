// The byte encodings of the fleet code: COPY rows (text and binary) and the LIKE text of a name
// fragment.
#include "fleet/copy_text.hpp"

#include <gtest/gtest.h>

#include "fleet/copy_binary.hpp"
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

TEST(CopyBinaryRow, FieldsAreLengthPrefixedAndBigEndian) {
    std::string out;
    copy_binary_header(&out);
    EXPECT_EQ(out, std::string("PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0", 19));
    out.clear();
    CopyBinaryRow(&out, 4).bytes(std::string("x\n\xff\0", 4)).int8(-2).int4(258).null();
    EXPECT_EQ(out, std::string("\0\x04"                                      // 4 fields
                               "\0\0\0\x04x\n\xff\0"                         // 4 bytes, as they are
                               "\0\0\0\x08\xff\xff\xff\xff\xff\xff\xff\xfe"  // -2 in 8 bytes
                               "\0\0\0\x04\0\0\x01\x02"                      // 258 in 4 bytes
                               "\xff\xff\xff\xff",                           // NULL: length -1
                               2 + 8 + 12 + 8 + 4));
    out.clear();
    copy_binary_trailer(&out);
    EXPECT_EQ(out, "\xff\xff");
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
