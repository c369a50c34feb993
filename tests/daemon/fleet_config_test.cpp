// The [fleet] section of the configuration: its keys, its default (off), its errors.
#include <gtest/gtest.h>

#include <variant>

#include "daemon/config.hpp"

namespace wsindex::daemon {
namespace {

TEST(FleetConfig, OffWithoutASection) {
    const ConfigResult r = parse_config("workers = 2\n", "test.toml");
    ASSERT_TRUE(std::holds_alternative<Config>(r));
    EXPECT_FALSE(std::get<Config>(r).fleet.has_value());
}

TEST(FleetConfig, KeysAreRead) {
    const ConfigResult r = parse_config(
        "[fleet]\nurl = \"postgresql:///wsfleet?host=/run/postgresql\"\nhost = \"web-17\"\n"
        "password_file = \"/etc/wsindexd/fleet.pw\"\n",
        "test.toml");
    ASSERT_TRUE(std::holds_alternative<Config>(r)) << std::get<ConfigError>(r).message;
    const auto& fleet = std::get<Config>(r).fleet;
    ASSERT_TRUE(fleet.has_value());
    EXPECT_EQ(fleet->url, "postgresql:///wsfleet?host=/run/postgresql");
    EXPECT_EQ(fleet->host, "web-17");
    EXPECT_EQ(fleet->password_file, "/etc/wsindexd/fleet.pw");
}

TEST(FleetConfig, ErrorsNameTheKey) {
    const auto error = [](const char* text) {
        const ConfigResult r = parse_config(text, "test.toml");
        return std::holds_alternative<ConfigError>(r) ? std::get<ConfigError>(r).message
                                                      : std::string("(accepted)");
    };
    EXPECT_NE(error("[fleet]\nhost = \"a\"\n").find("needs a 'url'"), std::string::npos);
    EXPECT_NE(error("[fleet]\nurl = \"x\"\nuser = \"y\"\n").find("unknown key"), std::string::npos);
    EXPECT_NE(error("[fleet]\nurl = \"x\"\nurl = \"y\"\n"), "(accepted)");
    EXPECT_NE(error("[fleet]\nurl = \"x\"\npassword_file = \"rel\"\n"), "(accepted)");
}

}  // namespace
}  // namespace wsindex::daemon
