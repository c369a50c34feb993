// Clean close: writing and taking the mark of a cleanly closed index file.
#include "storage/clean_close.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

namespace wsindex::storage {
namespace {

std::string mark_path(const std::string& db_path) { return db_path + ".clean"; }

// The identity the mark records, as one line of text.
bool describe(const std::string& db_path, std::string* out) {
    struct stat st {};
    if (::stat(db_path.c_str(), &st) != 0) return false;
    // A log left behind: a connection is open, or the last close could not checkpoint.
    struct stat wal {};
    if (::stat((db_path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) return false;
    std::ostringstream line;
    line << "wsindex-clean-close 1 " << st.st_dev << ' ' << st.st_ino << ' ' << st.st_size << ' '
         << st.st_mtim.tv_sec << ' ' << st.st_mtim.tv_nsec << '\n';
    *out = line.str();
    return true;
}

core::Status errno_status(const std::string& what) {
    return core::Status(std::error_code(errno, std::generic_category()), what);
}

}  // namespace

core::Status mark_closed_cleanly(const std::string& db_path) {
    // The file's modification time set to this second with random nanoseconds: a write after
    // this one sets it to the kernel's clock, which is coarse (a tick, 1-4 ms), so a write in
    // the same tick as the close would otherwise leave the time the mark recorded.
    timespec times[2] = {};
    times[0].tv_nsec = UTIME_OMIT;  // access time: untouched
    ::clock_gettime(CLOCK_REALTIME, &times[1]);
    times[1].tv_nsec = static_cast<long>(std::random_device{}() % 1'000'000'000u);
    if (::utimensat(AT_FDCWD, db_path.c_str(), times, 0) != 0) {
        if (errno == ENOENT) return {};
        return errno_status("setting the modification time of " + db_path);
    }
    std::string line;
    if (!describe(db_path, &line)) return {};  // nothing to vouch for
    const std::string mark = mark_path(db_path);
    const std::string tmp = mark + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return errno_status("creating " + tmp);
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    const int write_errno = errno;
    ::close(fd);
    if (!written) {
        ::unlink(tmp.c_str());
        errno = write_errno;
        return errno_status("writing " + tmp);
    }
    // No fsync: a mark lost to a power failure only costs the next start its quick_check.
    if (::rename(tmp.c_str(), mark.c_str()) != 0) {
        const core::Status s = errno_status("renaming " + tmp);
        ::unlink(tmp.c_str());
        return s;
    }
    return {};
}

bool take_clean_close_mark(const std::string& db_path) {
    const std::string mark = mark_path(db_path);
    std::string recorded;
    {
        std::ifstream in(mark);
        if (!in) return false;
        std::getline(in, recorded);
        recorded.push_back('\n');
    }
    ::unlink(mark.c_str());
    std::string now;
    return describe(db_path, &now) && now == recorded;
}

}  // namespace wsindex::storage
