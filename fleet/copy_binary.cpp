// CopyBinaryRow: PostgreSQL's binary COPY format (fleet/copy_binary.hpp).
#include "fleet/copy_binary.hpp"

#include <type_traits>

namespace wsindex::fleet {
namespace {

// Big-endian, as the format wants, whatever the host's byte order.
template <typename T>
void put_be(std::string* out, T value) {
    using U = std::make_unsigned_t<T>;
    const auto u = static_cast<U>(value);
    for (int shift = (sizeof(U) - 1) * 8; shift >= 0; shift -= 8) {
        out->push_back(static_cast<char>((u >> shift) & 0xff));
    }
}

}  // namespace

void copy_binary_header(std::string* out) {
    static constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // and its terminating NUL
    out->append(kSignature, sizeof kSignature);
    put_be<std::int32_t>(out, 0);  // flags: no OIDs
    put_be<std::int32_t>(out, 0);  // header extension: none
}

void copy_binary_trailer(std::string* out) { put_be<std::int16_t>(out, -1); }

CopyBinaryRow::CopyBinaryRow(std::string* out, std::int16_t fields) : out_(out) {
    put_be(out_, fields);
}

CopyBinaryRow& CopyBinaryRow::bytes(std::string_view value) {
    // A name is at most 255 bytes, a path some KiB past PATH_MAX, a host name short: all far
    // below the int32 length a field can have.
    put_be(out_, static_cast<std::int32_t>(value.size()));
    out_->append(value.data(), value.size());
    return *this;
}

CopyBinaryRow& CopyBinaryRow::int8(std::int64_t value) {
    put_be<std::int32_t>(out_, 8);
    put_be(out_, value);
    return *this;
}

CopyBinaryRow& CopyBinaryRow::int4(std::int32_t value) {
    put_be<std::int32_t>(out_, 4);
    put_be(out_, value);
    return *this;
}

CopyBinaryRow& CopyBinaryRow::null() {
    put_be<std::int32_t>(out_, -1);
    return *this;
}

}  // namespace wsindex::fleet
