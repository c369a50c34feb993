// Test accounts, made and removed one tool at a time across test processes (accounts.hpp).
#include "tests/cli/support/accounts.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>

namespace wsindex::cli::test {
namespace {

// Shared by every test binary of the tree (and of other checkouts on the machine: harmless).
constexpr const char* kAccountLock = "/tmp/wsindex-tests-accounts.lock";

}  // namespace

std::string missing_for_real_users(const std::vector<std::string>& tools) {
    if (::geteuid() != 0) return "needs root (useradd, a root daemon)";
    std::vector<std::string> all = {"/usr/sbin/useradd", "/usr/bin/setpriv"};
    all.insert(all.end(), tools.begin(), tools.end());
    for (const std::string& tool : all) {
        if (::access(tool.c_str(), X_OK) != 0) return "needs " + tool;
    }
    return {};
}

Exit run_account_tool(const std::vector<std::string>& argv, const std::string& scratch_dir) {
    const int fd = ::open(kAccountLock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) (void)::flock(fd, LOCK_EX);  // without it the tool runs anyway, as before
    Exit r = run(argv, scratch_dir, std::chrono::seconds(60));
    if (fd >= 0) ::close(fd);  // releases the lock
    return r;
}

TestUser::TestUser(const std::string& name, const std::string& scratch)
    : name_(name), scratch_(scratch) {
    const Exit r = run_account_tool({"/usr/sbin/useradd", "--no-create-home", "--user-group",
                                     "--shell", "/usr/sbin/nologin", name_},
                                    scratch_);
    if (r.code != 0) {
        error_ = "useradd " + name_ + ": " + r.err;
        return;
    }
    created_ = true;
    const passwd* pw = ::getpwnam(name_.c_str());
    if (pw == nullptr || pw->pw_uid == 0) {
        error_ = "getpwnam " + name_ + " after useradd";
        return;
    }
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
}

TestUser::~TestUser() {
    if (created_) run_account_tool({"/usr/sbin/userdel", name_}, scratch_);
}

TestGroup::TestGroup(const std::string& name, const std::string& scratch)
    : name_(name), scratch_(scratch) {
    const Exit r = run_account_tool({"/usr/sbin/groupadd", name_}, scratch_);
    created_ = r.code == 0;
    if (!created_) error_ = "groupadd " + name_ + ": " + r.err;
}

TestGroup::~TestGroup() {
    if (created_) run_account_tool({"/usr/sbin/groupdel", name_}, scratch_);
}

}  // namespace wsindex::cli::test
