// NameFile: the immutable base of the name index — every visible name of one index generation in
// one flat image, written to a file next to the database and mapped read-only (or held in memory
// when there is no file, e.g. for tests and benchmarks).
//
// Why a file: the names then live in the page cache, which the kernel may keep or drop, instead of
// ~31 bytes per name of the daemon's anonymous memory for as long as it runs. Why one flat image:
// a search is a memmem pass over contiguous bytes, and the same bytes are the file's and the
// mapping's, so loading is a validation pass, not a parse.
//
// Format (docs/schema.md, "The name index file"): a 128-byte header (magic, format version, the
// generation and the database file's identity it was built from, counts, section sizes, the file
// size and a checksum of the header), then the sections, each at an 8-byte boundary. open()
// trusts nothing: the header checksum, every size against the file's length, and every offset of
// every section are checked before the first search, so a truncated, foreign or damaged file is
// refused (and rebuilt from the database by the caller), never read out of bounds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace wsindex::storage {

class Database;

// Which database file a name file belongs to: its device and inode (a database replaced by a
// rebuild or copied elsewhere is another file, and its names must be rebuilt).
struct DatabaseIdentity {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    static core::Status of(const std::string& db_path, DatabaseIdentity* out);
    bool operator==(const DatabaseIdentity&) const = default;
};

class NameFile {
  public:
    static constexpr std::uint32_t kFormatVersion = 2;

    NameFile(const NameFile&) = delete;
    NameFile& operator=(const NameFile&) = delete;
    ~NameFile();

    // Reads the visible names of `db` and their generation in one read transaction and builds
    // the image in memory.
    static core::Status build(Database& db, const DatabaseIdentity& identity,
                              std::shared_ptr<const NameFile>* out);
    // Builds the image of `db`'s names straight into `path` (atomically, as write() does), in
    // bounded memory: each section streams into a temporary file, then the image is written
    // from them (name_file_writer.cpp). The file's bytes are those build() + write() give.
    static core::Status build_file(Database& db, const DatabaseIdentity& identity,
                                   const std::string& path);
    // Writes the image to `path` atomically (a temporary file in the same directory, fsync,
    // rename, fsync of the directory).
    core::Status write(const std::string& path) const;
    // Maps `path` read-only and validates it (header, sizes, every offset). A file that fails
    // any check is refused with a Status naming the check; `identity` must match.
    static core::Status open(const std::string& path, const DatabaseIdentity& identity,
                             std::shared_ptr<const NameFile>* out);

    [[nodiscard]] std::int64_t generation() const { return generation_; }
    [[nodiscard]] std::size_t size() const { return name_count_; }
    [[nodiscard]] std::size_t dir_count() const { return dir_count_; }
    [[nodiscard]] bool mapped() const { return mapped_; }
    // The XXH3-64 of the image's body: what derived files (the trigram lists) are bound to.
    [[nodiscard]] std::uint64_t body_checksum() const { return body_checksum_; }
    // Bytes of the image: anonymous memory when built in memory, page cache when mapped.
    [[nodiscard]] std::size_t image_bytes() const { return image_size_; }

    // Name `i`'s bytes, directory ordinal, type letter; directory `d`'s id, prefix, first name.
    [[nodiscard]] std::string_view name(std::size_t i) const {
        return {names_ + starts_[i], static_cast<std::size_t>(starts_[i + 1] - starts_[i] - 1)};
    }
    // The same bytes with ASCII A-Z folded to a-z.
    [[nodiscard]] std::string_view folded_name(std::size_t i) const {
        return {folded_ + starts_[i], static_cast<std::size_t>(starts_[i + 1] - starts_[i] - 1)};
    }
    [[nodiscard]] std::uint32_t dir_of(std::size_t i) const { return dir_of_[i]; }
    [[nodiscard]] char type(std::size_t i) const { return types_[i]; }
    [[nodiscard]] std::int64_t dir_id(std::size_t d) const { return dir_ids_[d]; }
    [[nodiscard]] std::string_view prefix(std::size_t d) const {
        return {prefixes_ + dir_starts_[d],
                static_cast<std::size_t>(dir_starts_[d + 1] - dir_starts_[d])};
    }
    [[nodiscard]] std::uint64_t dir_first(std::size_t d) const { return dir_first_[d]; }
    // The first name of the first directory whose id is greater than `id` (size() if none).
    [[nodiscard]] std::size_t first_name_after_dir(std::int64_t id) const;
    // The directory ordinal of `id`, or -1 when the base has no such directory.
    [[nodiscard]] std::int64_t dir_ordinal(std::int64_t id) const;

    // The names of [begin, end) holding `needle` (already folded when ignore_case) appended to
    // `hits`, in order, each once. Thread-safe (const, no state).
    void search(std::size_t begin, std::size_t end, std::string_view needle, bool ignore_case,
                std::vector<std::uint64_t>* hits) const;

  private:
    NameFile() = default;
    // Points the section pointers into image_ and checks every size and offset.
    core::Status attach(const char* image, std::size_t size, const DatabaseIdentity& identity);
    [[nodiscard]] std::size_t name_at(std::size_t pos, std::size_t from) const;

    std::string owned_;  // the image when built in memory
    void* map_ = nullptr;
    std::size_t image_size_ = 0;
    bool mapped_ = false;

    std::int64_t generation_ = -1;
    std::uint64_t body_checksum_ = 0;
    std::size_t name_count_ = 0;
    std::size_t dir_count_ = 0;
    std::size_t names_bytes_ = 0;
    const std::uint64_t* starts_ = nullptr;      // name_count_ + 1: byte offset of each name
    const std::int64_t* dir_ids_ = nullptr;      // dir_count_, strictly increasing
    const std::uint64_t* dir_starts_ = nullptr;  // dir_count_ + 1: offset of each prefix
    const std::uint64_t* dir_first_ = nullptr;   // dir_count_ + 1: each directory's first name
    const std::uint32_t* dir_of_ = nullptr;      // name_count_: each name's directory ordinal
    const char* types_ = nullptr;                // name_count_: find's %y letter
    const char* names_ = nullptr;                // name '\0' name '\0' ...
    const char* folded_ = nullptr;               // the same with ASCII A-Z folded to a-z
    const char* prefixes_ = nullptr;             // the directories' prefixes, back to back
};

}  // namespace wsindex::storage
