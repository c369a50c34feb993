// Visibility policy: the adaptors from a connection's peer credentials to the seam
// (daemon/seams.hpp) that filters every answer about files, and the per-user daemon's trust in
// its own uid.
#pragma once

#include <sys/types.h>

#include "daemon/permission_check.hpp"
#include "daemon/seams.hpp"

namespace wsindex::daemon {

// Seams::visibility: one VisibilityFilter per call over the directories' permissions now (as
// plocate's access() check at query time sees them), judged along one DirChain per call: each
// directory is the one reached below the ancestors judged for it.
VisibilityPolicy make_visibility_policy();
// The same over another source (the permissions recorded by a scan; tests).
VisibilityPolicy make_visibility_policy(DirPermSource source);

// Whether this process may read past permission bits (uid 0, or CAP_DAC_OVERRIDE or
// CAP_DAC_READ_SEARCH in its permitted set). False for a per-user daemon.
bool process_may_bypass_permissions();

// `policy`, except that a caller whose uid is `own_uid` sees everything (sees_everything, no
// listability pass). Only sound for a daemon that cannot bypass permissions
// (process_may_bypass_permissions() false): everything it indexed, it read with that uid's
// rights, so that user may read it too (main.cpp decides).
VisibilityPolicy trusting_own_user(VisibilityPolicy policy, uid_t own_uid);

}  // namespace wsindex::daemon
