// Control policy: root or members of the control group.
#include "daemon/control_policy.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace wsindex::daemon {
namespace {

constexpr uid_t kBob = 1001;
constexpr gid_t kBobGroup = 1001;
constexpr gid_t kStaff = 50;

TEST(ControlPolicy, MayControl) {
    EXPECT_TRUE(may_control(make_caller(0, 0, {}), std::nullopt));
    EXPECT_FALSE(may_control(make_caller(kBob, kBobGroup, {}), std::nullopt));
    EXPECT_TRUE(may_control(make_caller(kBob, kBobGroup, {kStaff}), kStaff));
    EXPECT_TRUE(may_control(make_caller(kBob, kStaff, {}), kStaff));  // primary group
    EXPECT_FALSE(may_control(make_caller(kBob, kBobGroup, {kStaff}), gid_t{999}));
}

TEST(ControlPolicy, LookupGroup) {
    EXPECT_EQ(lookup_group("root").value_or(12345), 0U);
    EXPECT_FALSE(lookup_group("wsindex-no-such-group-xyz").has_value());
}

}  // namespace
}  // namespace wsindex::daemon
