// Credentials: /proc status parsing, the pid-reuse check, and this process's own credentials
// through /proc and SO_PEERCRED/SO_PEERGROUPS.
#include "daemon/credentials.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace wsindex::daemon {
namespace {

namespace fs = std::filesystem;

fs::path make_temp_dir(const char* stem) {
    std::string pattern = (fs::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    return pattern;
}

TEST(Credentials, ParsesProcStatusGroups) {
    std::vector<gid_t> groups;
    EXPECT_TRUE(parse_status_groups("Name:\tx\nGroups:\t4 24 27 1000 \nNSpid:\t1\n", &groups));
    EXPECT_EQ(groups, (std::vector<gid_t>{4, 24, 27, 1000}));
    EXPECT_TRUE(parse_status_groups("Groups:\t\n", &groups));
    EXPECT_TRUE(groups.empty());
    EXPECT_FALSE(parse_status_groups("Name:\tx\n", &groups));
    EXPECT_FALSE(parse_status_groups("Groups:\t4 x\n", &groups));
}

TEST(Credentials, CallerFromProcessChecksTheIdentity) {
    const fs::path proc = make_temp_dir("wsvis-proc");
    fs::create_directories(proc / "42");
    std::ofstream(proc / "42" / "status")
        << "Name:\tfake\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\n"
           "Groups:\t100 27 4 27 \n";
    Caller caller;
    ASSERT_TRUE(caller_from_process(42, 1000, 100, &caller, proc.string()));
    EXPECT_EQ(caller.groups, (std::vector<gid_t>{4, 27, 100}));  // sorted, unique
    // The pid now belongs to someone else: refused.
    EXPECT_FALSE(caller_from_process(42, 1001, 100, &caller, proc.string()));
    EXPECT_FALSE(caller_from_process(43, 1000, 100, &caller, proc.string()));
    fs::remove_all(proc);
}

std::vector<gid_t> my_groups() {
    std::vector<gid_t> groups(static_cast<std::size_t>(::getgroups(0, nullptr)));
    groups.resize(
        static_cast<std::size_t>(::getgroups(static_cast<int>(groups.size()), groups.data())));
    return make_caller(0, 0, groups).groups;
}

TEST(Credentials, CallerFromRealProcessAndSocketMatchOurCredentials) {
    Caller from_proc;
    ASSERT_TRUE(caller_from_process(::getpid(), ::geteuid(), ::getegid(), &from_proc));
    EXPECT_EQ(from_proc.uid, ::geteuid());
    EXPECT_EQ(from_proc.groups, my_groups());

    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    Caller from_socket;
    ASSERT_TRUE(caller_from_socket(pair[0], &from_socket));
    EXPECT_EQ(from_socket.uid, ::geteuid());
    EXPECT_EQ(from_socket.gid, ::getegid());
    EXPECT_EQ(from_socket.groups, my_groups());
    ::close(pair[0]);
    ::close(pair[1]);
}

}  // namespace
}  // namespace wsindex::daemon
