// stat_named: the live index's per-name re-stat of a directory's changed entries.
#include "core/named_stat.hpp"

#include <fcntl.h>

#include <cerrno>
#include <system_error>

namespace wsindex::core {
Status stat_named(const std::string& dir, std::span<const std::string> names, const FsOps& fs,
                  NamedStat* out) {
    *out = NamedStat{};
    // By descriptor (core/resolve.hpp): no symlink in any component of `dir`, and the record of
    // the directory is the fstat of the descriptor whose names are stat'ed, so both describe
    // one object whatever is renamed meanwhile.
    const int fd = fs.open_dir_path(AT_FDCWD, dir.c_str());
    if (fd < 0) return Status::from_errno(-fd, "open " + dir);
    FileStat st;
    if (const int rc = fs.stat_fd(fd, st); rc < 0) {
        fs.close_fd(fd);
        return Status::from_errno(-rc, "fstat " + dir);
    }
    out->self.path = dir;  // name_offset 0, as a walk's root record
    fill_stat(out->self, st);
    out->self.dir_id = 1;
    const std::string prefix = dir.empty() || dir.back() == '/' ? dir : dir + "/";
    std::uint64_t next_dir_id = 2;
    Status result;
    for (const std::string& name : names) {
        if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
            result = Status(std::make_error_code(std::errc::invalid_argument), "name " + name);
            break;
        }
        if (const int rc = fs.stat_at(fd, name.c_str(), st, true); rc < 0) {
            if (rc == -ENOENT) {
                out->gone.push_back(name);
                continue;
            }
            result = Status::from_errno(-rc, "stat " + prefix + name);
            break;
        }
        WalkResult r;
        r.path = prefix + name;
        r.name_offset = static_cast<std::uint32_t>(prefix.size());
        r.parent_id = 1;
        r.depth = 1;
        fill_stat(r, st);
        if (r.is_dir()) r.dir_id = next_dir_id++;
        out->found.push_back(std::move(r));
    }
    fs.close_fd(fd);
    return result;
}

}  // namespace wsindex::core
