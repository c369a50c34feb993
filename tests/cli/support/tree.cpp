// Tree generators (odd names, big, unreadable) and the find/du references for the e2e tests.
#include "tests/cli/support/tree.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tests/cli/support/process.hpp"

namespace wsindex::cli::test {

namespace {

// RAII for a directory fd.
class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    [[nodiscard]] int get() const { return fd_; }

  private:
    int fd_;
};

#define WSCTL_CHECK_SYS(call)                                       \
    do {                                                            \
        if ((call) != 0) {                                          \
            ADD_FAILURE() << #call << ": " << std::strerror(errno); \
            return;                                                 \
        }                                                           \
    } while (false)

int open_dir(int at, const std::string& name) {
    const int fd = ::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) ADD_FAILURE() << "open " << name << ": " << std::strerror(errno);
    return fd;
}

void make_dir(int at, const std::string& name) {
    if (::mkdirat(at, name.c_str(), 0755) != 0) {
        ADD_FAILURE() << "mkdir " << name << ": " << std::strerror(errno);
    }
}

// A file of `size` bytes of content (or a hole when sparse).
void make_file(int at, const std::string& name, std::size_t size, bool sparse = false) {
    const int fd = ::openat(at, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        ADD_FAILURE() << "create " << name << ": " << std::strerror(errno);
        return;
    }
    if (sparse) {
        if (::ftruncate(fd, static_cast<off_t>(size)) != 0) ADD_FAILURE() << "ftruncate";
    } else if (size > 0) {
        const std::string content(size, 'x');
        if (::write(fd, content.data(), content.size()) != static_cast<ssize_t>(size)) {
            ADD_FAILURE() << "write " << name;
        }
    }
    ::close(fd);
}

}  // namespace

void make_odd_tree(const std::string& root) {
    WSCTL_CHECK_SYS(::mkdir(root.c_str(), 0755));
    Fd top(open_dir(AT_FDCWD, root));
    const int t = top.get();

    make_file(t, "plain.txt", 100);
    make_file(t, "new\nline", 7);
    make_dir(t, "dir\nwith newline");
    {
        Fd d(open_dir(t, "dir\nwith newline"));
        make_file(d.get(), "inner\nfile", 33);
        make_file(d.get(), "\n", 1);  // a name that is just a newline
    }
    make_file(t, "bad\xff\xfe utf8", 11);
    make_dir(t, "\xc3(dir");  // invalid 2-byte sequence
    {
        Fd d(open_dir(t, "\xc3(dir"));
        make_file(d.get(), "caf\xc3\xa9 ok", 5);  // valid UTF-8 below an invalid parent
        make_file(d.get(), "\x80\x81\x82", 3);
    }
    make_file(t, std::string(255, 'n'), 255);  // NAME_MAX
    make_dir(t, std::string(254, 'D') + "\xff");
    {
        Fd d(open_dir(t, std::string(254, 'D') + "\xff"));
        make_file(d.get(), std::string(255, '\xe9'), 17);  // 255 bytes, none valid UTF-8
    }
    make_file(t, "with space and  two", 2);
    make_file(t, "-rf", 3);
    make_file(t, "star*?[x]", 4);
    make_file(t, "back\\slash", 5);
    make_file(t, "tab\there", 6);
    make_file(t, "sparse.img", 3 << 20, /*sparse=*/true);
    make_file(t, "hard1", 5000);
    make_dir(t, "links");
    {
        Fd d(open_dir(t, "links"));
        WSCTL_CHECK_SYS(::linkat(t, "hard1", d.get(), "hard2", 0));
        WSCTL_CHECK_SYS(::linkat(t, "hard1", d.get(), "hard3", 0));
        WSCTL_CHECK_SYS(::symlinkat("../plain.txt", d.get(), "to-plain"));
        WSCTL_CHECK_SYS(::symlinkat("/nonexistent/dangling", d.get(), "dangling"));
        WSCTL_CHECK_SYS(::symlinkat("..", d.get(), "loop-up"));
        WSCTL_CHECK_SYS(::mkfifoat(d.get(), "fifo", 0644));
    }
    make_dir(t, "empty");
    make_dir(t, ".hidden");
    {
        Fd d(open_dir(t, ".hidden"));
        make_file(d.get(), ".dotfile", 9);
    }

    // A chain deeper than PATH_MAX: 20 levels of 250-byte names, ~5000 bytes of path.
    make_dir(t, "deep");
    int fd = open_dir(t, "deep");
    for (int level = 0; level < 20 && fd >= 0; ++level) {
        std::string name = std::to_string(level) + "-" + std::string(240, 'p');
        make_dir(fd, name);
        const int next = open_dir(fd, name);
        ::close(fd);
        fd = next;
    }
    if (fd >= 0) {
        make_file(fd, "bottom\nof the chain", 4242);
        make_file(fd, "bottom\xff", 1);
        ::close(fd);
    }
}

void make_big_tree(const std::string& root, std::size_t entries) {
    WSCTL_CHECK_SYS(::mkdir(root.c_str(), 0755));
    Fd top(open_dir(AT_FDCWD, root));
    constexpr std::size_t kFilesPerDir = 100;
    constexpr std::size_t kSubdirs = 20;
    const std::size_t leaf_dirs = std::max<std::size_t>(1, entries / (kFilesPerDir + 1));
    const std::size_t top_dirs = (leaf_dirs + kSubdirs - 1) / kSubdirs;
    std::size_t made = 0;
    for (std::size_t a = 0; a < top_dirs && made < entries; ++a) {
        const std::string an = "top" + std::to_string(a);
        make_dir(top.get(), an);
        ++made;
        Fd ad(open_dir(top.get(), an));
        for (std::size_t b = 0; b < kSubdirs && made < entries; ++b) {
            const std::string bn = "sub" + std::to_string(b);
            make_dir(ad.get(), bn);
            ++made;
            Fd bd(open_dir(ad.get(), bn));
            for (std::size_t f = 0; f < kFilesPerDir && made < entries; ++f, ++made) {
                make_file(bd.get(), "file" + std::to_string(f) + ".dat", f % 7 == 0 ? f : 0);
            }
        }
    }
}

std::vector<std::string> make_locked_tree(const std::string& root, int count) {
    std::vector<std::string> locked;
    if (::mkdir(root.c_str(), 0755) != 0) {
        ADD_FAILURE() << "mkdir " << root << ": " << std::strerror(errno);
        return locked;
    }
    Fd top(open_dir(AT_FDCWD, root));
    make_file(top.get(), "readable.txt", 10);
    for (int i = 0; i < count; ++i) {
        const std::string outer = "open" + std::to_string(i);
        make_dir(top.get(), outer);
        Fd od(open_dir(top.get(), outer));
        make_file(od.get(), "visible.txt", 20);
        const std::string name = "locked" + std::to_string(i);
        make_dir(od.get(), name);
        {
            Fd ld(open_dir(od.get(), name));
            make_file(ld.get(), "secret.txt", 30);
            make_dir(ld.get(), "inner");
        }
        if (::fchmodat(od.get(), name.c_str(), 0, 0) != 0) ADD_FAILURE() << "chmod 000";
        locked.push_back(root + "/" + outer + "/" + name);
    }
    return locked;
}

std::set<std::string> split_nul(const std::string& text) {
    std::set<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t nul = text.find('\0', start);
        if (nul == std::string::npos) {
            out.insert(text.substr(start));
            break;
        }
        out.insert(text.substr(start, nul - start));
        start = nul + 1;
    }
    return out;
}

std::set<std::string> find_print0(const std::string& root, const std::string& scratch,
                                  bool with_root) {
    const auto r = run({"/usr/bin/find", root, "-print0"}, scratch);
    EXPECT_EQ(r.code, 0) << r.err;
    auto paths = split_nul(r.out);
    if (!with_root) paths.erase(root);
    return paths;
}

std::uint64_t du_sb(const std::string& path, const std::string& scratch) {
    const auto r = run({"/usr/bin/du", "-sb", path}, scratch);
    EXPECT_EQ(r.code, 0) << r.err;
    return std::strtoull(r.out.c_str(), nullptr, 10);
}

}  // namespace wsindex::cli::test
