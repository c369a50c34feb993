// NameFile: building the name image from the database, writing it, mapping and validating it, and
// the memmem search over a range of its names.
#include "storage/name_file.hpp"

#include <fcntl.h>
#include <string.h>  // memmem (GNU)
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "storage/database.hpp"
#include "storage/mapped_image.hpp"
#include "storage/name_file_format.hpp"
#include "storage/read_transaction.hpp"

namespace wsindex::storage {
namespace {

using namespace name_file_format;  // NOLINT(google-build-using-namespace): this file's format

core::Status invalid(const std::string& what) {
    return core::Status(std::make_error_code(std::errc::invalid_argument), "name file: " + what);
}

}  // namespace

core::Status DatabaseIdentity::of(const std::string& db_path, DatabaseIdentity* out) {
    struct stat st {};
    if (::stat(db_path.c_str(), &st) != 0) return errno_status("stat " + db_path);
    out->dev = static_cast<std::uint64_t>(st.st_dev);
    out->ino = static_cast<std::uint64_t>(st.st_ino);
    return {};
}

NameFile::~NameFile() {
    if (map_ != nullptr) ::munmap(map_, image_size_);
}

core::Status name_file_format::read_names(Database& db, std::int64_t* generation,
                                          const NameSink& sink) {
    // One read transaction: the generation and the names come from the same snapshot.
    ReadTransaction txn(db);
    if (auto s = txn.begin(); !s) return s;
    if (auto s = db.query_int64("SELECT value FROM meta WHERE key = 'generation'", generation);
        !s) {
        return s;
    }
    // Joined with dirs: rows of running scans and replaced rows awaiting collection have no
    // visible directory. Directory by directory in id order, names in byte order (the order
    // a find without an order reports, docs/schema.md).
    Statement rows;
    if (auto s = db.prepare("SELECT d.id, d.prefix, e.name, e.type FROM dirs AS d JOIN "
                            "entries AS e ON e.dir = d.id ORDER BY d.id, e.name",
                            &rows);
        !s) {
        return s;
    }
    std::int64_t last_dir = 0;
    bool any = false;
    for (bool row = true;;) {
        if (auto s = rows.step(&row); !s) return s;
        if (!row) break;
        const std::int64_t dir = rows.column_int64(0);
        if (!any || dir != last_dir) {
            if (auto s = sink.dir(dir, rows.column_bytes(1)); !s) return s;
            last_dir = dir;
            any = true;
        }
        const std::string_view type = rows.column_bytes(3);
        if (auto s = sink.name(rows.column_bytes(2), type.empty() ? '?' : type[0]); !s) return s;
    }
    return {};
}

core::Status NameFile::build(Database& db, const DatabaseIdentity& identity,
                             std::shared_ptr<const NameFile>* out) {
    std::string names;
    std::vector<std::uint64_t> starts;
    std::vector<std::uint32_t> dir_of;
    std::string types;
    std::vector<std::int64_t> dir_ids;
    std::vector<std::uint64_t> dir_starts;
    std::vector<std::uint64_t> dir_first;
    std::string prefixes;
    Header h;
    NameSink sink;
    sink.dir = [&](std::int64_t id, std::string_view prefix) -> core::Status {
        if (dir_ids.size() == UINT32_MAX) return too_many_dirs();
        dir_ids.push_back(id);
        dir_starts.push_back(prefixes.size());
        dir_first.push_back(starts.size());
        prefixes.append(prefix);
        return {};
    };
    sink.name = [&](std::string_view name, char type) -> core::Status {
        dir_of.push_back(static_cast<std::uint32_t>(dir_ids.size() - 1));
        types.push_back(type);
        starts.push_back(names.size());
        names.append(name);
        names.push_back('\0');
        return {};
    };
    if (auto s = read_names(db, &h.generation, sink); !s) return s;
    starts.push_back(names.size());
    dir_starts.push_back(prefixes.size());
    dir_first.push_back(dir_of.size());

    h.version = kFormatVersion;
    h.header_size = kHeaderSize;
    h.dev = identity.dev;
    h.ino = identity.ino;
    h.names = dir_of.size();
    h.dirs = dir_ids.size();
    h.names_bytes = names.size();
    h.prefix_bytes = prefixes.size();
    Layout l{};
    if (!layout(h, &l)) return invalid("index too large");
    h.file_size = l.end;

    std::unique_ptr<NameFile> file(new NameFile());
    std::string& image = file->owned_;
    image.assign(l.end, '\0');
    char* p = image.data();
    auto copy = [&](std::uint64_t at, const auto& v) {
        if (!v.empty()) std::memcpy(p + at, v.data(), v.size() * sizeof(v[0]));
    };
    copy(l.starts, starts);
    copy(l.dir_ids, dir_ids);
    copy(l.dir_starts, dir_starts);
    copy(l.dir_first, dir_first);
    copy(l.dir_of, dir_of);
    copy(l.types, types);
    copy(l.names, names);
    for (char& c : names) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    copy(l.folded, names);
    copy(l.prefixes, prefixes);
    put_header(p, h, XXH3_64bits(p + kHeaderSize, image.size() - kHeaderSize));
    // The vectors above go before the image is checked: the peak is one copy plus the image.
    names = {};
    starts = {};
    dir_of = {};
    if (auto s = file->attach(image.data(), image.size(), identity); !s) return s;
    *out = std::move(file);
    return {};
}

core::Status NameFile::write(const std::string& path) const {
    const std::string tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return errno_status("creating " + tmp);
    const char* p = mapped_ ? static_cast<const char*>(map_) : owned_.data();
    std::size_t done = 0;
    core::Status s;
    while (done < image_size_) {
        const ssize_t n = ::write(fd, p + done, image_size_ - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            s = errno_status("writing " + tmp);
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    if (s && ::fsync(fd) != 0) s = errno_status("fsync " + tmp);
    ::close(fd);
    if (s && ::rename(tmp.c_str(), path.c_str()) != 0) s = errno_status("renaming " + tmp);
    if (!s) {
        ::unlink(tmp.c_str());
        return s;
    }
    fsync_parent_dir(path);  // the rename is durable once the directory is
    return {};
}

core::Status NameFile::open(const std::string& path, const DatabaseIdentity& identity,
                            std::shared_ptr<const NameFile>* out) {
    void* map = nullptr;
    std::size_t size = 0;
    if (auto s = map_read_only(path, kHeaderSize, "name file", &map, &size); !s) return s;
    std::unique_ptr<NameFile> file(new NameFile());
    file->map_ = map;
    file->image_size_ = size;
    file->mapped_ = true;
    if (auto s = file->attach(static_cast<const char*>(map), size, identity); !s) return s;
    *out = std::move(file);
    return {};
}

core::Status NameFile::attach(const char* image, std::size_t size,
                              const DatabaseIdentity& identity) {
    image_size_ = size;
    if (size < kHeaderSize) return invalid("shorter than its header");
    if (std::memcmp(image, kMagic, sizeof kMagic) != 0) return invalid("not a name file");
    if (get_field<std::uint64_t>(image, kChecksumAt) != fnv1a(image, kChecksumAt)) {
        return invalid("header checksum mismatch");
    }
    Header h;
    h.version = get_field<std::uint32_t>(image, 8);
    h.header_size = get_field<std::uint32_t>(image, 12);
    h.generation = get_field<std::int64_t>(image, 16);
    h.dev = get_field<std::uint64_t>(image, 24);
    h.ino = get_field<std::uint64_t>(image, 32);
    h.names = get_field<std::uint64_t>(image, 40);
    h.dirs = get_field<std::uint64_t>(image, 48);
    h.names_bytes = get_field<std::uint64_t>(image, 56);
    h.prefix_bytes = get_field<std::uint64_t>(image, 64);
    h.file_size = get_field<std::uint64_t>(image, 72);
    if (h.version != kFormatVersion) {
        return invalid("format version " + std::to_string(h.version) + ", expected " +
                       std::to_string(kFormatVersion));
    }
    if (h.header_size != kHeaderSize) return invalid("unexpected header size");
    if (!(DatabaseIdentity{h.dev, h.ino} == identity)) return invalid("built for another database");
    Layout l{};
    if (!layout(h, &l) || l.end != h.file_size || h.file_size != size) {
        return invalid("sizes do not match the file's length (truncated?)");
    }
    // Every byte of the body: the offset checks below keep a search in bounds, this keeps it
    // from answering with damaged names (one pass at memory speed; the pages are read anyway).
    if (get_field<std::uint64_t>(image, kBodyChecksumAt) !=
        XXH3_64bits(image + kHeaderSize, size - kHeaderSize)) {
        return invalid("body checksum mismatch");
    }
    generation_ = h.generation;
    body_checksum_ = get_field<std::uint64_t>(image, kBodyChecksumAt);
    name_count_ = h.names;
    dir_count_ = h.dirs;
    names_bytes_ = h.names_bytes;
    starts_ = reinterpret_cast<const std::uint64_t*>(image + l.starts);
    dir_ids_ = reinterpret_cast<const std::int64_t*>(image + l.dir_ids);
    dir_starts_ = reinterpret_cast<const std::uint64_t*>(image + l.dir_starts);
    dir_first_ = reinterpret_cast<const std::uint64_t*>(image + l.dir_first);
    dir_of_ = reinterpret_cast<const std::uint32_t*>(image + l.dir_of);
    types_ = image + l.types;
    names_ = image + l.names;
    folded_ = image + l.folded;
    prefixes_ = image + l.prefixes;
    // Every offset a search follows, checked once: a damaged body is refused, not read past.
    if (starts_[0] != 0 || starts_[name_count_] != names_bytes_) return invalid("name offsets");
    for (std::size_t i = 0; i < name_count_; ++i) {
        if (starts_[i + 1] <= starts_[i] || starts_[i + 1] > names_bytes_ ||
            names_[starts_[i + 1] - 1] != '\0' || folded_[starts_[i + 1] - 1] != '\0') {
            return invalid("name offsets");
        }
    }
    if (dir_first_[0] != 0 || dir_first_[dir_count_] != name_count_ || dir_starts_[0] != 0 ||
        dir_starts_[dir_count_] != h.prefix_bytes) {
        return invalid("directory offsets");
    }
    for (std::size_t d = 0; d < dir_count_; ++d) {
        if (dir_first_[d + 1] <= dir_first_[d] || dir_starts_[d + 1] < dir_starts_[d] ||
            dir_starts_[d + 1] > h.prefix_bytes || (d > 0 && dir_ids_[d] <= dir_ids_[d - 1])) {
            return invalid("directory offsets");
        }
    }
    for (std::size_t i = 0; i < name_count_; ++i) {
        const std::uint32_t d = dir_of_[i];
        if (d >= dir_count_ || i < dir_first_[d] || i >= dir_first_[d + 1]) {
            return invalid("name directories");
        }
    }
    return {};
}

std::size_t NameFile::first_name_after_dir(std::int64_t id) const {
    const std::int64_t* end = dir_ids_ + dir_count_;
    const std::size_t d = static_cast<std::size_t>(std::upper_bound(dir_ids_, end, id) - dir_ids_);
    return dir_first_[d];
}

std::int64_t NameFile::dir_ordinal(std::int64_t id) const {
    const std::int64_t* end = dir_ids_ + dir_count_;
    const std::int64_t* it = std::lower_bound(dir_ids_, end, id);
    return it != end && *it == id ? it - dir_ids_ : -1;
}

std::size_t NameFile::name_at(std::size_t pos, std::size_t from) const {
    // Galloping from `from` rather than a binary search of every start: consecutive hits are
    // usually a few dozen names apart, so this probes a few nearby cache lines. Invariant:
    // starts_[lo] <= pos.
    std::size_t lo = from;
    std::size_t step = 1;
    while (lo + step < name_count_ && starts_[lo + step] <= pos) {
        lo += step;
        step *= 2;
    }
    const std::size_t hi = std::min(lo + step, name_count_);
    return static_cast<std::size_t>(std::upper_bound(starts_ + lo, starts_ + hi, pos) - starts_) -
           1;
}

void NameFile::search(std::size_t begin, std::size_t end, std::string_view needle, bool ignore_case,
                      std::vector<std::uint64_t>* hits) const {
    if (begin >= end) return;
    if (needle.empty()) {
        for (std::size_t i = begin; i < end; ++i) hits->push_back(i);
        return;
    }
    const char* haystack = ignore_case ? folded_ : names_;
    std::size_t pos = starts_[begin];
    const std::size_t stop = starts_[end];
    std::size_t next = begin;  // hits come in order: the next one is in this name or a later one
    while (pos < stop) {
        const void* hit = ::memmem(haystack + pos, stop - pos, needle.data(), needle.size());
        if (hit == nullptr) return;
        const std::size_t i =
            name_at(static_cast<std::size_t>(static_cast<const char*>(hit) - haystack), next);
        hits->push_back(i);
        // Skip the rest of this name: one report per name.
        next = i + 1;
        pos = starts_[next];
    }
}

}  // namespace wsindex::storage
