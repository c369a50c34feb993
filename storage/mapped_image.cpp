// Pieces shared by the index's derived files: checksum, whole-file read-only mapping, durable
// rename.
#include "storage/mapped_image.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace wsindex::storage {

std::uint64_t fnv1a(const char* p, std::size_t n) {
    std::uint64_t h = 14695981039346656037ull;
    for (std::size_t i = 0; i < n; ++i) {
        h ^= static_cast<unsigned char>(p[i]);
        h *= 1099511628211ull;
    }
    return h;
}

core::Status errno_status(const std::string& what) {
    return core::Status(std::error_code(errno, std::generic_category()), what);
}

core::Status map_read_only(const std::string& path, std::size_t min_size, const std::string& what,
                           void** map, std::size_t* size) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status("opening " + path);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const core::Status s = errno_status("stat " + path);
        ::close(fd);
        return s;
    }
    const auto bytes = static_cast<std::size_t>(st.st_size);
    if (bytes < min_size) {
        ::close(fd);
        return core::Status(std::make_error_code(std::errc::invalid_argument),
                            what + ": shorter than its header");
    }
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    const int map_errno = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
        errno = map_errno;
        return errno_status("mapping " + path);
    }
    *map = p;
    *size = bytes;
    return {};
}

void fsync_parent_dir(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
}

}  // namespace wsindex::storage
