// fs_type_name: statfs(2) f_type magic numbers to the file-system type names updatedb uses.
#pragma once

#include <cstdint>
#include <string_view>

namespace wsindex::core {

// The kernel's name for a file-system magic ("proc", "sysfs", "tmpfs", "nfs", "fuse", ...), or
// "unknown". f_type cannot see a FUSE subtype: every FUSE file system is "fuse".
std::string_view fs_type_name(std::uint64_t magic);

}  // namespace wsindex::core
