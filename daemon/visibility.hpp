// Visibility: everything the daemon uses to decide what a caller may see and do, in one
// include. Each concept lives in its own header:
// - daemon/credentials.hpp: who is calling (uid, groups);
// - daemon/control_policy.hpp: who may start or cancel scans;
// - daemon/permission_check.hpp: a directory's permissions and the kernel's check of them;
// - daemon/visibility_filter.hpp: the rule (read and search on every ancestor), cached;
// - daemon/visibility_policy.hpp: the adaptors to daemon/seams.hpp.
#pragma once

#include "daemon/control_policy.hpp"
#include "daemon/credentials.hpp"
#include "daemon/permission_check.hpp"
#include "daemon/visibility_filter.hpp"
#include "daemon/visibility_policy.hpp"
