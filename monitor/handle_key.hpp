// HandleKey: a directory's file-system identity (fsid + file handle) as hashable bytes.
//
// fanotify names directories by (fsid, file handle); name_to_handle_at and fstatfs give the same
// pair for a directory the client knows, so both sides meet in one hash table.
#pragma once

#include <fcntl.h>
#include <linux/types.h>

#include <string>

#include "core/status.hpp"

namespace wsindex::monitor {

using HandleKey = std::string;

// The key of (fsid, handle): fsid bytes, handle type, handle bytes.
[[nodiscard]] HandleKey make_handle_key(const __kernel_fsid_t& fsid, const struct file_handle& fh);

// The key of the directory open at `dirfd`, or an error (EOPNOTSUPP: no file handles there).
[[nodiscard]] core::Status handle_key_of(int dirfd, HandleKey& out);

}  // namespace wsindex::monitor
