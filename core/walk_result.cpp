// entry_type_from_mode: st_mode's file-type bits to find's %y letters.
#include "core/walk_result.hpp"

#include <sys/stat.h>

namespace wsindex::core {

EntryType entry_type_from_mode(std::uint32_t mode) {
    switch (mode & S_IFMT) {
        case S_IFREG:
            return EntryType::File;
        case S_IFDIR:
            return EntryType::Directory;
        case S_IFLNK:
            return EntryType::Symlink;
        case S_IFIFO:
            return EntryType::Fifo;
        case S_IFSOCK:
            return EntryType::Socket;
        case S_IFCHR:
            return EntryType::CharDevice;
        case S_IFBLK:
            return EntryType::BlockDevice;
        default:
            return EntryType::Unknown;
    }
}

}  // namespace wsindex::core
