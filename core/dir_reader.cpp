// DirBuffer: getdents64 into one growable buffer, indexing the entries.
#include "core/dir_reader.hpp"

#include <dirent.h>

#include <cstring>
#include <string_view>
#include <unordered_set>

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
        if (n < 0) {
            if (reads > 1) drop_repeated_names();
            return static_cast<int>(-n);
        }
        if (n == 0) {
            if (reads > 1) drop_repeated_names();
            return 0;
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
    // and made again between two getdents64 calls can come back in the later call (offset-
    // ordered directories such as older tmpfs did): the walker would stat it twice, walk it
    // twice if a directory, and the index key (dir, name) would be written twice.
    // Keeps each name's first record. Only for listings that took more than one call (more
    // than ~2000 entries), so the common small directory pays nothing.
    std::unordered_set<std::string_view> seen;
    seen.reserve(offsets_.size());
    std::size_t kept = 0;
    for (const std::uint32_t off : offsets_) {
        const auto* d = reinterpret_cast<const LinuxDirent64*>(data_.get() + off);
        if (seen.insert(std::string_view(d->d_name)).second) offsets_[kept++] = off;
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
