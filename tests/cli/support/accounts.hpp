// Real accounts for the tests that run wsctl as other users: a user (useradd, with its own
// group) and a group (groupadd), removed again by their destructors.
//
// The account tools of every test process run one at a time (an flock shared by the test
// binaries): ctest runs the suites side by side, and useradd, usermod and userdel rewrite
// /etc/passwd and /etc/group under lock files that a concurrent tool may find taken.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "tests/cli/support/process.hpp"

namespace wsindex::cli::test {

// What a test with real users lacks here, "" when nothing: root (useradd, a root daemon), and
// useradd, setpriv and each of `tools` (absolute paths) executable.
std::string missing_for_real_users(const std::vector<std::string>& tools = {});

// Runs an account tool (useradd, usermod, ...) with argv, holding the tests' account lock.
Exit run_account_tool(const std::vector<std::string>& argv, const std::string& scratch_dir);

class TestUser {
  public:
    TestUser(const std::string& name, const std::string& scratch);
    ~TestUser();  // userdel (its user group too)
    TestUser(const TestUser&) = delete;
    TestUser& operator=(const TestUser&) = delete;

    // Empty when the account exists with a non-root uid; else what went wrong.
    [[nodiscard]] const std::string& error() const { return error_; }
    [[nodiscard]] bool ok() const { return error_.empty(); }
    [[nodiscard]] const std::string& name() const { return name_; }
    [[nodiscard]] uid_t uid() const { return uid_; }
    [[nodiscard]] gid_t gid() const { return gid_; }

  private:
    std::string name_;
    std::string scratch_;
    std::string error_;
    bool created_ = false;
    uid_t uid_ = 0;
    gid_t gid_ = 0;
};

class TestGroup {
  public:
    TestGroup(const std::string& name, const std::string& scratch);
    ~TestGroup();  // groupdel
    TestGroup(const TestGroup&) = delete;
    TestGroup& operator=(const TestGroup&) = delete;

    [[nodiscard]] const std::string& error() const { return error_; }
    [[nodiscard]] const std::string& name() const { return name_; }

  private:
    std::string name_;
    std::string scratch_;
    std::string error_;
    bool created_ = false;
};

}  // namespace wsindex::cli::test
