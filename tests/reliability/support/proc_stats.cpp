// /proc readers: descriptor count and targets, VmRSS/VmHWM.
#include "tests/reliability/support/proc_stats.hpp"

#include <dirent.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <sstream>

namespace wsindex::reliability::test {

namespace {

template <class F>
int each_fd(pid_t pid, F&& f) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return -1;
    int n = 0;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        ++n;
        f(dir + "/" + e->d_name);
    }
    ::closedir(d);
    return n;
}

}  // namespace

int open_fds(pid_t pid) {
    return each_fd(pid, [](const std::string&) {});
}

std::string fd_targets(pid_t pid) {
    std::string out;
    each_fd(pid, [&](const std::string& link) {
        char target[PATH_MAX];
        const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
        out +=
            link + " -> " + (n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "?") + "\n";
    });
    return out;
}

long status_kib(pid_t pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(field + ":", 0) == 0) {
            std::istringstream s(line.substr(field.size() + 1));
            long kib = -1;
            s >> kib;
            return kib;
        }
    }
    return -1;
}

}  // namespace wsindex::reliability::test
