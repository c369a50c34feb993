// Test support: temporary directories and generated trees.
#include "tests/daemon/support/daemon_test_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace wsindex::daemon::test {

TempDir::TempDir() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/wsindexd-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

void write_file(const std::string& path, std::size_t bytes) {
    std::ofstream out(path, std::ios::binary);
    out << std::string(bytes, 'x');
}

void write_file(const std::string& path, const std::string& content) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
    ::close(fd);
}

std::size_t make_tree(const std::string& root, std::size_t dirs, std::size_t files_per_dir,
                      std::size_t bytes) {
    std::size_t made = 0;
    for (std::size_t d = 0; d < dirs; ++d) {
        const std::string dir = root + "/dir" + std::to_string(d);
        std::filesystem::create_directories(dir);
        ++made;
        for (std::size_t f = 0; f < files_per_dir; ++f) {
            write_file(dir + "/file" + std::to_string(f) + ".txt", bytes);
            ++made;
        }
    }
    return made;
}

}  // namespace wsindex::daemon::test
