// Rows for COPY ... FROM STDIN (FORMAT binary): PostgreSQL's binary COPY format, written straight
// from the local index's values. Why binary rather than text: a bytea goes as its bytes (text
// doubles it into hex, and the server decodes the hex again), and an integer as 8 bytes (no
// decimal formatting and parsing). Measured on 1M entries of the balanced tree, server side
// alone: COPY of the text file 2.6 s, of the binary one 1.6 s (docs/fleet.md, "Measured").
//
// The format (PostgreSQL docs, "COPY", "Binary Format"): a signature and two int32 words, then
// per row an int16 field count and per field an int32 length (-1: NULL) and the value in the
// column type's binary form (bigint: 8 bytes, integer: 4, both big-endian; text and bytea: the
// bytes); an int16 -1 ends the data. Each field's type must be the column's exactly: an 8-byte
// value for an integer column is an error ("incorrect binary data format").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wsindex::fleet {

// The signature and header fields that start a binary COPY's data, and the word that ends it.
void copy_binary_header(std::string* out);
void copy_binary_trailer(std::string* out);

class CopyBinaryRow {
  public:
    // Starts a row of `fields` fields; exactly that many calls must follow.
    CopyBinaryRow(std::string* out, std::int16_t fields);
    CopyBinaryRow& bytes(std::string_view value);  // bytea or text (UTF-8 checked by the server)
    CopyBinaryRow& int8(std::int64_t value);       // bigint
    CopyBinaryRow& int4(std::int32_t value);       // integer
    CopyBinaryRow& null();

  private:
    std::string* out_;
};

}  // namespace wsindex::fleet
