// ScratchDir and remove_tree: temporary test directories and their fd-relative removal.
#include "tests/cli/support/scratch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace wsindex::cli::test {

namespace {

// Empties the directory open as `fd` (closes it).
bool empty_directory(int fd) {
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
        ::close(fd);
        return false;
    }
    bool ok = true;
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    for (const auto& name : names) {
        struct stat st {};
        if (::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            ::fchmodat(::dirfd(dir), name.c_str(), 0700, 0);
            const int child = ::openat(::dirfd(dir), name.c_str(),
                                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (child >= 0) ok = empty_directory(child) && ok;
            if (::unlinkat(::dirfd(dir), name.c_str(), AT_REMOVEDIR) != 0) ok = false;
        } else if (::unlinkat(::dirfd(dir), name.c_str(), 0) != 0) {
            ok = false;
        }
    }
    ::closedir(dir);
    return ok;
}

}  // namespace

bool remove_tree(const std::string& path) {
    ::chmod(path.c_str(), 0700);
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT || ::unlink(path.c_str()) == 0;
    bool ok = empty_directory(fd);
    if (::rmdir(path.c_str()) != 0) ok = false;
    return ok;
}

std::string memory_backed_base() {
    struct stat st {};
    if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0) {
        return "/dev/shm";
    }
    return {};
}

ScratchDir::ScratchDir(const std::string& tag, const std::string& base) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string dir = !base.empty()                      ? base
                            : tmp != nullptr && tmp[0] != '\0' ? std::string(tmp)
                                                               : std::string("/tmp");
    std::string pattern = dir + "/wsctl-" + tag + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
        return;
    }
    path_ = pattern;
    ::chmod(path_.c_str(), 0755);
}

ScratchDir::~ScratchDir() {
    if (!path_.empty() && !remove_tree(path_)) {
        ADD_FAILURE() << "could not remove " << path_;
    }
}

}  // namespace wsindex::cli::test
