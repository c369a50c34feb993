// wsctl fleet in wsctl itself: runs wsctl-fleet, the same command line with libpq linked in.
//
// Why a second program: libpq brings about twenty shared libraries (TLS, Kerberos, LDAP), and
// loading them cost every wsctl command more time than most commands need in all (a `wsctl ui`
// first screen, a `wsctl dupes` on cached hashes). Only `wsctl fleet` talks to PostgreSQL, so
// only wsctl-fleet links it; wsctl hands it the unchanged command line.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/context.hpp"
#include "cli/exit_codes.hpp"

namespace wsindex::cli {
namespace {

// This process's own arguments, as the kernel keeps them (NUL-separated).
std::vector<std::string> own_arguments() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    std::size_t start = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (all[i] == '\0') {
            args.push_back(all.substr(start, i - start));
            start = i + 1;
        }
    }
    return args;
}

// wsctl-fleet next to this wsctl (a build tree), else where the install puts it relative to
// wsctl's directory (bin/../libexec/wsindexd/ for any prefix).
std::vector<std::string> helper_candidates() {
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return {};
    std::string dir(self, static_cast<std::size_t>(n));
    dir.erase(dir.rfind('/') + 1);
    return {dir + "wsctl-fleet", dir + WSINDEX_FLEET_HELPER_FROM_BIN};
}

int helper_failure(const Context& ctx, const std::string& message) {
    note(ctx, message);
    if (ctx.json) {
        print_json(ctx,
                   nlohmann::json{{"error", "Failed"}, {"message", message}, {"exit_code", 1}});
    }
    return finish(ctx, kExitFailure);
}

}  // namespace

void exec_fleet_helper(std::vector<std::string> args, std::string* tried) {
    for (const std::string& helper : helper_candidates()) {
        args[0] = helper;
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(helper.c_str(), argv.data());
        if (!tried->empty()) *tried += ", ";
        *tried += helper + " (" + std::strerror(errno) + ")";
    }
}

int run_fleet(const Context& ctx, const FleetOptions& /*options: wsctl-fleet parses them*/) {
    std::vector<std::string> args = own_arguments();
    if (args.empty()) return helper_failure(ctx, "fleet: cannot read this process's arguments");
    std::fflush(nullptr);
    std::string tried;  // each path tried, with why it failed
    exec_fleet_helper(std::move(args), &tried);
    return helper_failure(ctx, "fleet: cannot run wsctl-fleet: " +
                                   (tried.empty() ? "this program's path is unknown" : tried));
}

}  // namespace wsindex::cli
