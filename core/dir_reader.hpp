// DirBuffer and read_directory: all of a directory's getdents64 records in one growable buffer.
//
// Records stay in the kernel's linux_dirent64 layout (no copy, no per-entry allocation); an
// offset list indexes the entries other than "." and "..", so a huge directory can be split into
// chunks by index and stat'ed by several workers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/fs_ops.hpp"
#include "core/walk_result.hpp"

namespace wsindex::core {

// The kernel's record (getdents64(2)); glibc does not export it.
struct LinuxDirent64 {
    std::uint64_t d_ino;
    std::int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];  // NUL-terminated, up to 255 bytes (flexible in the kernel's definition)
};

class DirBuffer {
  public:
    // Bytes handed to each getdents64 call at least. 64 KiB holds ~2000 typical entries, so most
    // directories take one call plus the call that returns 0.
    static constexpr std::size_t kMinRead = 64 * 1024;

    DirBuffer() = default;

    // Reads every record of `fd` (replacing previous contents), each name once even if a
    // concurrent change made a later getdents64 call return it again. Returns 0 or an errno; on
    // error the records read so far remain.
    int read_all(const FsOps& fs, int fd);

    [[nodiscard]] std::size_t count() const { return offsets_.size(); }
    [[nodiscard]] const LinuxDirent64& entry(std::size_t i) const {
        return *reinterpret_cast<const LinuxDirent64*>(data_.get() + offsets_[i]);
    }
    // The allocated size in bytes (for memory accounting and tests).
    [[nodiscard]] std::size_t capacity() const { return capacity_; }

  private:
    void reserve_free(std::size_t free_bytes);
    void drop_repeated_names();

    std::unique_ptr<char[]> data_;
    std::size_t capacity_ = 0;
    std::size_t size_ = 0;
    std::vector<std::uint32_t> offsets_;  // entries other than "." and ".."
};

// d_type to an EntryType (DT_UNKNOWN -> Unknown).
EntryType entry_type_from_dtype(unsigned char d_type);

}  // namespace wsindex::core
