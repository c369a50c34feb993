// UnindexedSubdirs: which subdirectories of a re-listed directory the live index must walk.
#include "storage/entry_binding.hpp"
#include "storage/live_listing.hpp"
#include "storage/live_update.hpp"
#include "storage/path_range.hpp"

namespace wsindex::storage {

core::Status UnindexedSubdirs::find(const RelistedDir& dir, std::vector<std::string>* paths) {
    paths->clear();
    if (!prepared_) {
        if (auto s = db_.prepare("SELECT id FROM dirs WHERE prefix = ?", &find_dir_); !s) return s;
        if (auto s = db_.prepare(std::string("SELECT ") + kEntryColumnsSql +
                                     " FROM entries WHERE dir = ? AND name = ?",
                                 &read_entry_);
            !s) {
            return s;
        }
        prepared_ = true;
    }
    std::string path = dir.self.path;
    if (path.size() > 1 && path[0] == '/' && path[1] == '/') path.erase(0, 1);
    find_dir_.bind_blob(1, dir_prefix(path));
    bool row = false;
    if (auto s = find_dir_.step(&row); !s) return s;
    const std::int64_t id = row ? find_dir_.column_int64(0) : 0;
    find_dir_.reset();
    if (!row) return {};
    for (const core::WalkResult& e : dir.entries) {
        if (!e.is_dir()) continue;
        if (walked_again(dir, e.name())) {
            paths->push_back(child_path(path, e.name()));
            continue;
        }
        read_entry_.bind_int64(1, id).bind_blob(2, e.name());
        if (auto s = read_entry_.step(&row); !s) return s;
        bool known = false;
        if (row) {
            const core::WalkResult old = read_entry_metadata(read_entry_, 0);
            known = same_directory(old, e) && !walked_again(dir, old, e);
        }
        read_entry_.reset();
        if (known) {
            find_dir_.bind_blob(1, dir_prefix(child_path(path, e.name())));
            if (auto s = find_dir_.step(&row); !s) return s;
            find_dir_.reset();
            known = row;
        }
        if (!known) paths->push_back(child_path(path, e.name()));
    }
    return {};
}

core::Status unindexed_subdirs(Database& db, const RelistedDir& dir,
                               std::vector<std::string>* paths) {
    UnindexedSubdirs finder(db);
    return finder.find(dir, paths);
}

}  // namespace wsindex::storage
