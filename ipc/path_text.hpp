// Absolute paths as text (no file system): the normal form the daemon and wsctl agree on.
//
// Normal form: starts with '/', no empty, "." or ".." component, no trailing '/' except "/"
// itself. The daemon takes only normal paths from callers; wsctl sends only normal paths.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wsindex::ipc {

// True when `path` is absolute and already in normal form.
bool is_normalized_absolute(std::string_view path);

// `path` (absolute, or relative to `cwd`, itself absolute) in normal form: repeated '/'
// collapsed, "." removed, ".." drops the previous component (never above '/'). Lexical only:
// a ".." after a symbolic link names the link's parent, as the shell's `cd -L` does.
std::string lexically_normal(std::string_view path, std::string_view cwd = "/");

// The parent of a path in normal form: "/a/b" -> "/a", "/a" -> "/"; nullopt for "/" and for
// a path without '/'.
std::optional<std::string_view> parent_path(std::string_view path);

}  // namespace wsindex::ipc
