// WriterLock: flock(LOCK_EX|LOCK_NB) on a lock file next to the database.
#include "storage/writer_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace wsindex::storage {

WriterLock::WriterLock(WriterLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

WriterLock::~WriterLock() {
    if (fd_ >= 0) ::close(fd_);
}

core::Status WriterLock::acquire(const std::string& db_path, WriterLock* out) {
    const std::string path = db_path + "-writer.lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return core::Status::from_errno(errno, "opening " + path);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd);
        return core::Status::from_errno(
            err, err == EWOULDBLOCK ? "another process is writing the index (" + path + ")"
                                    : "locking " + path);
    }
    WriterLock lock;
    lock.fd_ = fd;
    *out = std::move(lock);
    return {};
}

}  // namespace wsindex::storage
