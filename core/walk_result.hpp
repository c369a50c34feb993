// WalkResult: one record per file-system entry found by the walker — its metadata, or its error.
//
// This is the contract between core/ (the walker produces it) and storage/ (the index consumes it).
// Names are bytes: `path` may hold newlines and invalid UTF-8 and may be longer than PATH_MAX.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wsindex::core {

// The letters of find's %y, so that SQL users and `find -printf %y` agree.
enum class EntryType : char {
    File = 'f',
    Directory = 'd',
    Symlink = 'l',
    Fifo = 'p',
    Socket = 's',
    CharDevice = 'c',
    BlockDevice = 'b',
    Unknown = '?',  // neither d_type nor stat could tell
};

// Maps st_mode's file type bits to an EntryType.
EntryType entry_type_from_mode(std::uint32_t mode);

struct WalkResult {
    // The entry's path, rooted at the scan root exactly as given (root itself: the root string).
    // Only the name for files when the walk ran with WalkOptions::full_paths == false.
    std::string path;
    // path.substr(name_offset) is the entry's own name (for the root: the whole root string).
    std::uint32_t name_offset = 0;
    // Directories get an id at discovery, unique within one walk, 1 for the root; 0 for others.
    std::uint64_t dir_id = 0;
    // The id of the directory that contains this entry; 0 for the root.
    std::uint64_t parent_id = 0;
    // 0 for the root, 1 for its entries, ...
    std::uint32_t depth = 0;
    // A directory that was listed: how many entries the listing held, i.e. how many records
    // carry this directory's dir_id as their parent_id (each entry yields exactly one record,
    // with its stat or its error). 0 for directories not listed and for non-directories. It
    // lets a consumer tell when it has seen all of a directory's records.
    std::uint32_t children = 0;

    EntryType type = EntryType::Unknown;
    // errno when something about this entry could not be read, else 0. A directory that was
    // stat'ed but could not be listed (EACCES) has has_stat == true and error != 0; an entry
    // whose stat failed has has_stat == false and `type` from the directory listing's d_type.
    int error = 0;
    bool has_stat = false;

    // lstat(2)-style metadata, valid when has_stat.
    std::uint64_t size = 0;    // st_size, bytes
    std::uint64_t blocks = 0;  // st_blocks, 512-byte units
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t nlink = 0;
    std::uint32_t mode = 0;
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::int64_t mtime_ns = 0;  // nanoseconds since the epoch
    std::int64_t ctime_ns = 0;

    [[nodiscard]] std::string_view name() const {
        return std::string_view(path).substr(name_offset);
    }
    [[nodiscard]] bool is_dir() const { return type == EntryType::Directory; }
};

struct FileStat;
// Every stat field of `r` from `st` (has_stat, size ... ctime_ns, type): what a walk and a
// per-name stat (named_stat.hpp) both record.
void fill_stat(WalkResult& r, const FileStat& st);

}  // namespace wsindex::core
