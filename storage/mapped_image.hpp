// Pieces shared by the index's derived files (the name file, the trigram file): fixed-offset
// header fields, the header checksum, section alignment, a read-only mapping of a whole file,
// and making a rename durable.
//
// Why shared: both files follow one discipline (a 128-byte header with an FNV-1a of its first
// 120 bytes, sections at 8-byte boundaries, mapped read-only and validated before use, written
// to a temporary file and renamed), and a fix to one belongs to the other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/status.hpp"

namespace wsindex::storage {

// FNV-1a (64-bit) of n bytes: the header checksum (cheap, and a header is 120 bytes).
std::uint64_t fnv1a(const char* p, std::size_t n);

// A field of type T at byte `at` of an image (unaligned access through memcpy).
template <typename T>
void put_field(char* image, std::size_t at, T v) {
    std::memcpy(image + at, &v, sizeof v);
}
template <typename T>
T get_field(const char* image, std::size_t at) {
    T v;
    std::memcpy(&v, image + at, sizeof v);
    return v;
}

constexpr std::uint64_t align8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }

// Maps all of `path` read-only (MAP_SHARED: the page cache's pages). A file shorter than
// `min_size` is refused (invalid_argument, "`what`: shorter than its header").
core::Status map_read_only(const std::string& path, std::size_t min_size, const std::string& what,
                           void** map, std::size_t* size);

// fsync of the directory holding `path`: a rename into it is durable once this returns.
void fsync_parent_dir(const std::string& path);

// A Status from errno, "what: strerror".
core::Status errno_status(const std::string& what);

}  // namespace wsindex::storage
