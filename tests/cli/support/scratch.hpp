// A temporary directory for one test, removed with everything in it (also paths longer than
// PATH_MAX and mode-000 directories) when the test ends.
#pragma once

#include <string>

namespace wsindex::cli::test {

class ScratchDir {
  public:
    // Creates BASE/wsctl-<tag>-XXXXXX, mode 0755 so that an unprivileged daemon can reach what
    // the test puts below it. BASE: `base` if given, else $TMPDIR, else /tmp.
    explicit ScratchDir(const std::string& tag, const std::string& base = {});
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ~ScratchDir();

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string operator/(const std::string& name) const {
        return path_ + "/" + name;
    }

  private:
    std::string path_;
};

// Removes `path` and everything below it, fd-relative (no PATH_MAX limit), restoring search and
// read permission on directories first. Best effort; returns false if anything was left.
bool remove_tree(const std::string& path);

// /dev/shm when it is a writable directory, else "" (the default base). Big trees go there:
// creating and removing 200k files on a shared disk costs minutes, on tmpfs seconds.
std::string memory_backed_base();

}  // namespace wsindex::cli::test
