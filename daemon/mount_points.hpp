// Mount points below a directory, from /proc/self/mountinfo: the live index marks the file
// system of each one that a walk of the root enters (fanotify marks are per file system).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wsindex::daemon {

// The mount points strictly below `root` (absolute, normalized), in mountinfo order. Reads
// `mountinfo_text` (the contents of /proc/self/mountinfo); octal escapes (\040 for a space, ...)
// are decoded.
std::vector<std::string> mount_points_below(std::string_view mountinfo_text,
                                            const std::string& root);

// The same from /proc/self/mountinfo (empty if it cannot be read).
std::vector<std::string> mount_points_below(const std::string& root);

}  // namespace wsindex::daemon
