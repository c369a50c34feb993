// Test support: sequential walker, shuffling, temp dirs, dumps of the visible index.
#include "tests/storage/support/tree_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "storage/database.hpp"
#include "storage/scan_writer.hpp"
#include "storage/statement.hpp"

namespace wsindex::storage::test {
namespace {

void fill_stat(core::WalkResult* r, const struct stat& st) {
    r->has_stat = true;
    r->type = core::entry_type_from_mode(st.st_mode);
    r->size = static_cast<std::uint64_t>(st.st_size);
    r->blocks = static_cast<std::uint64_t>(st.st_blocks);
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    r->nlink = st.st_nlink;
    r->mode = st.st_mode;
    r->uid = st.st_uid;
    r->gid = st.st_gid;
    r->mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    r->ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
}

core::EntryType from_dtype(unsigned char t) {
    switch (t) {
        case DT_REG:
            return core::EntryType::File;
        case DT_DIR:
            return core::EntryType::Directory;
        case DT_LNK:
            return core::EntryType::Symlink;
        case DT_FIFO:
            return core::EntryType::Fifo;
        case DT_SOCK:
            return core::EntryType::Socket;
        case DT_CHR:
            return core::EntryType::CharDevice;
        case DT_BLK:
            return core::EntryType::BlockDevice;
        default:
            return core::EntryType::Unknown;
    }
}

struct Walker {
    std::vector<core::WalkResult> out;
    std::uint64_t next_id = 2;

    // Lists directory `fd` (owned) whose record is out[self] with id `id`.
    void list(int fd, const std::string& path, std::uint64_t id, std::uint32_t depth,
              std::size_t self) {
        DIR* dir = fdopendir(fd);
        if (dir == nullptr) {
            ::close(fd);
            return;
        }
        std::vector<std::pair<std::size_t, int>> subdirs;  // (record index, its fd)
        std::uint32_t children = 0;
        while (dirent* d = readdir(dir)) {
            const std::string name = d->d_name;
            if (name == "." || name == "..") continue;
            ++children;
            core::WalkResult r;
            r.path = path == "/" ? "/" + name : path + "/" + name;
            r.name_offset = static_cast<std::uint32_t>(r.path.size() - name.size());
            r.parent_id = id;
            r.depth = depth + 1;
            struct stat st {};
            if (fstatat(dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
                fill_stat(&r, st);
            } else {
                r.error = errno;
                r.type = from_dtype(d->d_type);
            }
            if (r.is_dir()) {
                r.dir_id = next_id++;
                const int child = openat(dirfd(dir), name.c_str(),
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (child < 0) {
                    r.error = errno;
                } else {
                    subdirs.emplace_back(out.size(), child);
                }
            }
            out.push_back(std::move(r));
        }
        closedir(dir);
        out[self].children = children;  // as the real walker reports a listed directory
        for (auto [index, child] : subdirs) {
            const std::string child_path = out[index].path;
            const std::uint64_t child_id = out[index].dir_id;
            list(child, child_path, child_id, depth + 1, index);
        }
    }
};

}  // namespace

std::vector<core::WalkResult> walk_tree(const std::string& root) {
    Walker w;
    core::WalkResult r;
    r.path = root;
    r.name_offset = 0;
    r.dir_id = 1;
    struct stat st {};
    EXPECT_EQ(lstat(root.c_str(), &st), 0) << root;
    fill_stat(&r, st);
    w.out.push_back(r);
    const int fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    EXPECT_GE(fd, 0) << root;
    if (fd >= 0) w.list(fd, root, 1, 0, 0);
    return std::move(w.out);
}

void shuffle_results(std::vector<core::WalkResult>* results, unsigned seed) {
    std::mt19937 rng(seed);
    std::shuffle(results->begin(), results->end(), rng);
}

core::Status scan_with(ScanWriter& writer, const std::string& root, unsigned seed) {
    if (auto s = writer.begin(root); !s) return s;
    auto results = walk_tree(root);
    shuffle_results(&results, seed);
    core::Status s = feed(std::move(results), 777,
                          [&](std::span<core::WalkResult> b) { return writer.write(b); });
    if (!s) {
        (void)writer.abort(s, false);
        return s;
    }
    if (s = writer.complete(); !s) return s;
    return writer.collect_garbage();
}

core::Status scan_db(const std::string& db_path, const std::string& root, unsigned seed) {
    std::unique_ptr<ScanWriter> writer;
    if (auto s = ScanWriter::open(db_path, &writer); !s) return s;
    return scan_with(*writer, root, seed);
}

TempDir::TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "wsindex-storage-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
}

TempDir::~TempDir() { remove_tree(path_); }

void remove_tree(const std::string& path) {
    // rm copes with paths past PATH_MAX and with directories we made unreadable.
    const std::string cmd = "chmod -R u+rwx '" + path + "' 2>/dev/null; rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) ADD_FAILURE() << "could not remove " << path;
}

void write_file(const std::string& path, std::size_t bytes) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    std::string data(bytes, 'x');
    ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(bytes));
    ::close(fd);
}

namespace {
std::string dump_query(Database& db, const std::string& sql) {
    Statement s;
    auto st = db.prepare(sql, &s);
    EXPECT_TRUE(st) << st.to_string();
    std::vector<std::string> rows;
    for (bool row = true; st;) {
        st = s.step(&row);
        EXPECT_TRUE(st) << st.to_string();
        if (!row) break;
        std::string line;
        const int n = s.column_count();
        for (int i = 0; i < n; ++i) {
            if (i) line += '|';
            line += s.column_is_null(i) ? std::string("NULL") : std::string(s.column_bytes(i));
        }
        rows.push_back(line);
    }
    std::sort(rows.begin(), rows.end());
    std::string out;
    for (auto& r : rows) out += r + '\n';
    return out;
}
}  // namespace

std::string dump_files(Database& db) {
    return dump_query(db,
                      "SELECT CAST(path AS BLOB), CAST(name AS BLOB), type, size, blocks,"
                      " mtime_ns, ctime_ns, mode, uid, gid, dev, ino, nlink, errno FROM files");
}

std::string dump_totals(Database& db) {
    return dump_query(db,
                      "SELECT CAST(path AS BLOB), size, blocks, files, dirs, depth"
                      " FROM dir_totals");
}

std::string dump_index(Database& db) {
    return dump_files(db) + "--\n" + dump_totals(db) + "--\n" +
           dump_query(db, "SELECT CAST(path AS BLOB), errno, message FROM scan_errors");
}

std::string integrity(Database& db) { return query_text(db, "PRAGMA integrity_check"); }

Database open_reader(const std::string& db_path) {
    Database db;
    auto s = Database::open(db_path, OpenMode::read_only, &db);
    EXPECT_TRUE(s) << s.to_string();
    return db;
}

std::int64_t query_int(Database& db, const std::string& sql) {
    std::int64_t v = -1;
    auto s = db.query_int64(sql, &v);
    EXPECT_TRUE(s) << s.to_string();
    return v;
}

std::string query_text(Database& db, const std::string& sql) {
    Statement s;
    auto st = db.prepare(sql, &s);
    EXPECT_TRUE(st) << st.to_string();
    bool row = false;
    st = s.step(&row);
    EXPECT_TRUE(st) << st.to_string();
    return row ? std::string(s.column_bytes(0)) : std::string();
}

}  // namespace wsindex::storage::test
