// Walk error classification: which errnos are data (recorded, walk goes on) and which stop a walk.
//
// Recoverable: the entry is recorded with its error and the walk continues.
//   EACCES, EPERM   — unreadable or untraversable directory, stat denied
//   ENOENT          — removed between listing and open/stat (a race with the user, not a fault)
//   ENOTDIR, ELOOP  — replaced by a file or a symlink between stat and open (O_NOFOLLOW: ELOOP)
//   ESTALE          — the directory opened is not the one the listing stat'ed (renamed or
//                     exchanged in between: core/resolve.hpp), or a stale NFS handle
// Fatal: everything else (EIO, ENOMEM, EMFILE despite the fd budget, anything unexpected). The
// walk stops and the first fatal error is returned; guessing that an unknown error is harmless
// would silently produce an incomplete index.
#pragma once

#include <cerrno>

namespace wsindex::core {

[[nodiscard]] constexpr bool walk_error_is_recoverable(int err) {
    switch (err) {
        case EACCES:
        case EPERM:
        case ENOENT:
        case ENOTDIR:
        case ELOOP:
        case ESTALE:
            return true;
        default:
            return false;
    }
}

}  // namespace wsindex::core
