// Permission check: the kernel's class selection and ACL algorithm on hand-made tables (the
// comparison with the kernel itself is in visibility_test.cpp, through the filter).
#include "daemon/permission_check.hpp"

#include <gtest/gtest.h>

namespace wsindex::daemon {
namespace {

constexpr uid_t kAlice = 1000;
constexpr uid_t kBob = 1001;
constexpr gid_t kAliceGroup = 1000;
constexpr gid_t kBobGroup = 1001;
constexpr gid_t kStaff = 50;

TEST(PermissionCheck, PermitsUsesTheKernelsClassSelection) {
    const Caller bob = make_caller(kBob, kBobGroup, {kStaff});
    const Caller alice = make_caller(kAlice, kAliceGroup, {});
    const DirPerm owner_denied{040077, kBob, kStaff};
    EXPECT_FALSE(permits(bob, owner_denied, kSearch));  // owner bits 0, group bits not used
    EXPECT_TRUE(permits(alice, owner_denied, kRead | kSearch));  // other bits 7
    const DirPerm staff{040750, 0, kStaff};
    EXPECT_TRUE(permits(bob, staff, kRead | kSearch));  // supplementary group
    EXPECT_FALSE(permits(alice, staff, kSearch));
    EXPECT_FALSE(permits(bob, staff, kWrite));
    const DirPerm primary{040070, 0, kAliceGroup};
    EXPECT_TRUE(permits(alice, primary, kRead | kSearch));  // primary group
    EXPECT_TRUE(permits(make_caller(0, 0, {}), DirPerm{040000, 5, 5}, kRead | kSearch));
}

TEST(PermissionCheck, AclAlgorithmOnTables) {
    using T = AclEntry::Tag;
    // user::rwx user:7:rwx group::r-x group:9:--- mask::r-x other::---, owner 1, group 5.
    DirPerm p{040700,
              1,
              5,
              {{T::user_obj, 0, 7},
               {T::user, 7, 7},
               {T::group_obj, 0, 5},
               {T::group, 9, 0},
               {T::mask, 0, 5},
               {T::other, 0, 0}}};
    EXPECT_TRUE(permits(make_caller(1, 100, {}), p, kRead | kWrite | kSearch));  // owner, no mask
    EXPECT_TRUE(permits(make_caller(7, 100, {}), p, kRead | kSearch));
    EXPECT_FALSE(permits(make_caller(7, 100, {}), p, kWrite));        // masked
    EXPECT_TRUE(permits(make_caller(8, 5, {}), p, kRead | kSearch));  // owning group
    EXPECT_FALSE(permits(make_caller(8, 9, {}), p, kSearch));         // named group grants nothing
    EXPECT_TRUE(permits(make_caller(8, 9, {5}), p, kSearch));    // ... but the owning group does
    EXPECT_FALSE(permits(make_caller(8, 100, {}), p, kSearch));  // other
    EXPECT_TRUE(permits(make_caller(0, 0, {}), p, kRead | kSearch));  // root
    // A named user entry is not a fallback to the groups: user 7 in group 5 is still masked.
    EXPECT_FALSE(permits(make_caller(7, 5, {}), p, kWrite));
}

}  // namespace
}  // namespace wsindex::daemon
