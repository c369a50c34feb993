// DirBuffer: getdents64 into one growable buffer, indexing the entries.
#include "core/dir_reader.hpp"

#include <dirent.h>

#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

namespace wsindex::core {

void DirBuffer::reserve_free(std::size_t free_bytes) {
    if (capacity_ - size_ >= free_bytes) return;
    std::size_t cap = capacity_ ? capacity_ : kMinRead * 2;
    while (cap - size_ < free_bytes) cap *= 2;
    // new[] without value-initialisation: the kernel writes the bytes we read.
    std::unique_ptr<char[]> bigger(new char[cap]);
    if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = cap;
}

int DirBuffer::read_all(const FsOps& fs, int fd) {
    size_ = 0;
    offsets_.clear();
    int reads = 0;  // calls that returned records
    for (;;) {
        reserve_free(kMinRead);
        const long n = fs.read_dir(fd, data_.get() + size_, capacity_ - size_);
        if (n <= 0) {  // the end, or an error (the records read so far remain)
            if (reads > 1) drop_repeated_names();
            return static_cast<int>(-n);
        }
        ++reads;
        const std::size_t end = size_ + static_cast<std::size_t>(n);
        for (std::size_t off = size_; off < end;) {
            const auto* d = reinterpret_cast<const LinuxDirent64*>(data_.get() + off);
            const char* nm = d->d_name;
            if (!(nm[0] == '.' && (nm[1] == 0 || (nm[1] == '.' && nm[2] == 0)))) {
                offsets_.push_back(static_cast<std::uint32_t>(off));
            }
            off += d->d_reclen;
        }
        size_ = end;
    }
}

void DirBuffer::drop_repeated_names() {
    // POSIX leaves open whether an entry added after opendir is returned, so a name removed
    // and made again between two getdents64 calls can come back in the later call (in a
    // directory that lists in creation order): the walker would stat it twice, walk it twice
    // if a directory, and the index key (dir, name) would be written twice. Keeps each
    // name's first record. Only listings that took more than one call (over ~2000 entries) get
    // here. An open-addressing table of (hash, kept index) in one array: no node allocation per
    // name, as an unordered_set of string_views would make.
    const std::size_t n = offsets_.size();
    std::size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    const std::size_t mask = capacity - 1;
    std::vector<std::uint64_t> slots(capacity, 0);  // hash << 32 | (kept index + 1); 0: empty
    auto name_at = [this](std::uint32_t off) {
        return std::string_view(reinterpret_cast<const LinuxDirent64*>(data_.get() + off)->d_name);
    };
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t off = offsets_[i];
        const std::string_view name = name_at(off);
        const auto hash = static_cast<std::uint32_t>(std::hash<std::string_view>{}(name));
        for (std::size_t pos = hash & mask;; pos = (pos + 1) & mask) {
            const std::uint64_t slot = slots[pos];
            if (slot == 0) {
                slots[pos] = (std::uint64_t{hash} << 32) | (kept + 1);
                offsets_[kept++] = off;  // earlier kept entries stay where the table says
                break;
            }
            if (static_cast<std::uint32_t>(slot >> 32) == hash &&
                name_at(offsets_[(slot & 0xffffffffu) - 1]) == name) {
                break;  // a repeat: dropped
            }
        }
    }
    offsets_.resize(kept);
}

EntryType entry_type_from_dtype(unsigned char d_type) {
    switch (d_type) {
        case DT_REG:
            return EntryType::File;
        case DT_DIR:
            return EntryType::Directory;
        case DT_LNK:
            return EntryType::Symlink;
        case DT_FIFO:
            return EntryType::Fifo;
        case DT_SOCK:
            return EntryType::Socket;
        case DT_CHR:
            return EntryType::CharDevice;
        case DT_BLK:
            return EntryType::BlockDevice;
        default:
            return EntryType::Unknown;
    }
}

}  // namespace wsindex::core
