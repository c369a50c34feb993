// Scan roots: what a requested path becomes before it is queued, or the typed error it gets.
#pragma once

#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace wsindex::daemon {

// Resolves `path` (absolute) to the canonical root a scan will walk: realpath(3), so that
// "/home/", "/home/./x/.." and a symlink to /home all become "/home" and coalesce in the queue,
// and the reply shows which directory is really walked. Errors, checked before any queueing:
// NoSuchPath (missing), NotADirectory (a file, or a file used as a directory), PermissionDenied
// (the daemon cannot reach it), InvalidParameter (relative path, or a NUL byte).
// Touches the file system: call off the io thread.
ipc::Result<std::string> resolve_scan_root(std::string_view path);

}  // namespace wsindex::daemon
