// Scan roots: what a requested path becomes before it is queued, or the typed error it gets.
#pragma once

#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace wsindex::daemon {

// How a requested scan root is resolved.
enum class RootSymlinks {
    // realpath(3): for root, the daemon's own user and the configuration. "/home/", a symlink to
    // /home and "/home/./x/.." all become "/home", coalesce in the queue, and the reply shows
    // which directory is really walked. The result names the directory by its own path (no
    // symlink left in it), and the walk opens it again without following symlinks.
    Follow,
    // No symlink followed in any component (core::open_dir_absolute), ".." taken lexically as
    // the visibility check takes it: for a control-group member, who must not make the daemon
    // index a directory under a name she chose (a symlink of hers, or a component she swaps
    // while realpath runs). A symlink component answers NotADirectory.
    Refuse,
};

// Resolves `path` (absolute) to the canonical root a scan will walk. Errors, checked before any
// queueing: NoSuchPath (missing), NotADirectory (a file, or a file used as a directory; with
// Refuse also a symlink), PermissionDenied (the daemon cannot reach it), InvalidParameter
// (relative path, or a NUL byte). Touches the file system: call off the io thread.
ipc::Result<std::string> resolve_scan_root(std::string_view path,
                                           RootSymlinks symlinks = RootSymlinks::Follow);

// The answer for a path that does not exist, which is also the answer for a path the caller
// may not see (docs/security.md): the same kind, message and details.
ipc::Error no_such_scan_root(std::string_view path);

}  // namespace wsindex::daemon
