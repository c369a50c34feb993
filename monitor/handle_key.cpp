// HandleKey: fsid + file handle bytes of a directory, from an fd or from a fanotify record.
#include "monitor/handle_key.hpp"

#include <sys/statfs.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace wsindex::monitor {

HandleKey make_handle_key(const __kernel_fsid_t& fsid, const struct file_handle& fh) {
    HandleKey key;
    key.reserve(sizeof fsid + sizeof fh.handle_type + fh.handle_bytes);
    key.append(reinterpret_cast<const char*>(&fsid), sizeof fsid);
    key.append(reinterpret_cast<const char*>(&fh.handle_type), sizeof fh.handle_type);
    key.append(reinterpret_cast<const char*>(fh.f_handle), fh.handle_bytes);
    return key;
}

core::Status handle_key_of(int dirfd, HandleKey& out) {
    struct statfs sfs {};
    if (::fstatfs(dirfd, &sfs) != 0) return core::Status::from_errno(errno, "fstatfs");
    // MAX_HANDLE_SZ (128) bytes of handle after the header.
    std::vector<unsigned char> storage(sizeof(struct file_handle) + MAX_HANDLE_SZ);
    auto* fh = reinterpret_cast<struct file_handle*>(storage.data());
    fh->handle_bytes = MAX_HANDLE_SZ;
    int mount_id = 0;
    if (::name_to_handle_at(dirfd, "", fh, &mount_id, AT_EMPTY_PATH) != 0) {
        return core::Status::from_errno(errno, "name_to_handle_at");
    }
    __kernel_fsid_t fsid{};
    static_assert(sizeof fsid == sizeof sfs.f_fsid);
    std::memcpy(&fsid, &sfs.f_fsid, sizeof fsid);
    out = make_handle_key(fsid, *fh);
    return {};
}

}  // namespace wsindex::monitor
