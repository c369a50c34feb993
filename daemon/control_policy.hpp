// Control policy: who may start or cancel scans and change configuration (root, or members of
// the control group).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "daemon/credentials.hpp"
#include "daemon/seams.hpp"

namespace wsindex::daemon {

// May `caller` start or cancel scans or change configuration? Root, or a member (primary or
// supplementary) of the control group (`wsindex`). No control group configured: root only.
[[nodiscard]] bool may_control(const Caller& caller, std::optional<gid_t> control_group);

// The gid of a group name via getgrnam_r; nullopt if there is no such group.
std::optional<gid_t> lookup_group(const std::string& name);

// Seams::may_control: root or members of `control_group` (look it up once at startup with
// lookup_group("wsindex"); nullopt: root only).
ControlPolicy make_control_policy(std::optional<gid_t> control_group);

}  // namespace wsindex::daemon
