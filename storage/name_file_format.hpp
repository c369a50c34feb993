// The name file's format (docs/schema.md, "The name index file"), shared by the code that
// builds it in memory and maps it (name_file.cpp) and the code that builds it on disk
// (name_file_writer.cpp). Internal to storage/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>
#include <system_error>

#include "core/status.hpp"
#include "storage/mapped_image.hpp"

namespace wsindex::storage {
class Database;
}

namespace wsindex::storage::name_file_format {

constexpr char kMagic[8] = {'W', 'S', 'N', 'A', 'M', 'E', 'S', '\0'};
constexpr std::size_t kHeaderSize = 128;
constexpr std::size_t kBodyChecksumAt = 80;  // XXH3-64 of every byte after the header
constexpr std::size_t kChecksumAt = 120;     // FNV-1a of the header's bytes before it

// The header's fields, at fixed offsets (docs/schema.md, "The name index file").
struct Header {
    std::uint32_t version = 0;
    std::uint32_t header_size = 0;
    std::int64_t generation = 0;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t names = 0;
    std::uint64_t dirs = 0;
    std::uint64_t names_bytes = 0;
    std::uint64_t prefix_bytes = 0;
    std::uint64_t file_size = 0;
};

// Section offsets from the counts; false if they overflow (a damaged header).
struct Layout {
    std::uint64_t starts, dir_ids, dir_starts, dir_first, dir_of, types, names, folded, prefixes,
        end;
};

inline bool layout(const Header& h, Layout* out) {
    // Bounds far above any real index: keep every product below 2^63.
    constexpr std::uint64_t kMax = std::uint64_t{1} << 40;
    if (h.names >= kMax || h.dirs >= kMax || h.names_bytes >= kMax || h.prefix_bytes >= kMax) {
        return false;
    }
    Layout& l = *out;
    l.starts = kHeaderSize;
    l.dir_ids = l.starts + (h.names + 1) * 8;
    l.dir_starts = l.dir_ids + h.dirs * 8;
    l.dir_first = l.dir_starts + (h.dirs + 1) * 8;
    l.dir_of = l.dir_first + (h.dirs + 1) * 8;
    l.types = align8(l.dir_of + h.names * 4);
    l.names = align8(l.types + h.names);
    l.folded = align8(l.names + h.names_bytes);
    l.prefixes = align8(l.folded + h.names_bytes);
    l.end = align8(l.prefixes + h.prefix_bytes);
    return true;
}

// Writes the header's fields, its body checksum and its own checksum into the first
// kHeaderSize bytes at `p` (zeroed by the caller).
inline void put_header(char* p, const Header& h, std::uint64_t body_checksum) {
    std::memcpy(p, kMagic, sizeof kMagic);
    put_field(p, 8, h.version);
    put_field(p, 12, h.header_size);
    put_field(p, 16, h.generation);
    put_field(p, 24, h.dev);
    put_field(p, 32, h.ino);
    put_field(p, 40, h.names);
    put_field(p, 48, h.dirs);
    put_field(p, 56, h.names_bytes);
    put_field(p, 64, h.prefix_bytes);
    put_field(p, 72, h.file_size);
    put_field(p, kBodyChecksumAt, body_checksum);
    put_field(p, kChecksumAt, fnv1a(p, kChecksumAt));
}

// Where read_names delivers the index's names: each directory (in id order) before its names
// (in byte order). A failed Status stops the reading.
struct NameSink {
    std::function<core::Status(std::int64_t id, std::string_view prefix)> dir;
    std::function<core::Status(std::string_view name, char type)> name;
};

// Reads the visible names of `db` and their generation in one read transaction.
core::Status read_names(Database& db, std::int64_t* generation, const NameSink& sink);

// Directory ordinals are 32-bit.
inline core::Status too_many_dirs() {
    return core::Status(std::make_error_code(std::errc::value_too_large),
                        "name index: too many directories");
}

}  // namespace wsindex::storage::name_file_format
