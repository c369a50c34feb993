// stat_named: records of a few named entries of one directory, as a one-level walk of it would
// make them — for the live index, whose change monitor names what changed in a directory, so
// that a change costs a stat of that name instead of a re-listing of the whole directory.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/fs_ops.hpp"
#include "core/status.hpp"
#include "core/walk_result.hpp"

namespace wsindex::core {

struct NamedStat {
    WalkResult self;                // the directory's own record (lstat of `dir`)
    std::vector<WalkResult> found;  // the named entries that exist (full paths)
    std::vector<std::string> gone;  // the names that do not (ENOENT)
};

// Opens `dir` by descriptor (core/resolve.hpp: no symlink in any component) and lstats each name
// relative to that descriptor (never following a symlink in the last component); the directory's
// own record is the fstat of the same descriptor. Returns an error — and the caller lists the
// directory whole instead, which records errors as a walk does — when `dir` is not a directory
// that can be opened so (ELOOP: a symlink on the way; ENOTDIR: not a directory), or a name fails
// with anything but ENOENT. Names must be single components (no '/', not "." or "..").
Status stat_named(const std::string& dir, std::span<const std::string> names, const FsOps& fs,
                  NamedStat* out);

}  // namespace wsindex::core
