// entry_type_from_mode: st_mode's file-type bits to find's %y letters.
#include "core/walk_result.hpp"

#include <sys/stat.h>

#include "core/fs_ops.hpp"

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

void fill_stat(WalkResult& r, const FileStat& st) {
    r.has_stat = true;
    r.size = st.size;
    r.blocks = st.blocks;
    r.dev = st.dev;
    r.ino = st.ino;
    r.nlink = st.nlink;
    r.mode = st.mode;
    r.uid = st.uid;
    r.gid = st.gid;
    r.mtime_ns = st.mtime_ns;
    r.ctime_ns = st.ctime_ns;
    r.type = entry_type_from_mode(st.mode);
}

}  // namespace wsindex::core
