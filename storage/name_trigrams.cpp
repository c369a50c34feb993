// NameTrigrams: building the lists into a mapped file (a counting pass, then a filling pass),
// opening and validating that file, and the leapfrog join of a needle's lists.
#include "storage/name_trigrams.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include "storage/mapped_image.hpp"

namespace wsindex::storage {
namespace {

constexpr char kMagic[8] = {'W', 'S', 'T', 'R', 'I', 'G', 'R', '\0'};
constexpr std::size_t kHeaderSize = 128;
constexpr std::size_t kBodyChecksumAt = 96;  // XXH3-64 of every byte after the header
constexpr std::size_t kChecksumAt = 120;     // FNV-1a of the header's bytes before it
constexpr std::uint32_t kTrigramSpace = std::uint32_t{1} << 24;
// The largest name count whose ids (and id + 1, the build's "empty" mark) fit in 32 bits.
constexpr std::uint64_t kMaxNames = UINT32_MAX - 1;
// How many names the build handles between two looks at its cancel flag.
constexpr std::size_t kCancelEvery = 1 << 14;

// The header's fields, at fixed offsets (docs/schema.md, "The trigram file").
struct Header {
    std::uint32_t version = 0;
    std::uint32_t header_size = 0;
    std::int64_t base_generation = 0;  // 16
    std::uint64_t base_names = 0;      // 24
    std::uint64_t base_checksum = 0;   // 32
    std::uint64_t keys = 0;            // 40
    std::uint64_t list_bytes = 0;      // 48
    std::uint64_t postings = 0;        // 56
    std::uint64_t file_size = 0;       // 64
};

struct Layout {
    std::uint64_t keys, offsets, lists, end;
};

bool layout(const Header& h, Layout* out) {
    constexpr std::uint64_t kMax = std::uint64_t{1} << 40;  // keeps every product below 2^63
    if (h.keys > kTrigramSpace || h.list_bytes >= kMax) return false;
    out->keys = kHeaderSize;
    out->offsets = align8(out->keys + h.keys * 4);
    out->lists = out->offsets + (h.keys + 1) * 8;
    out->end = align8(out->lists + h.list_bytes);
    return true;
}

core::Status invalid(const std::string& what) {
    return core::Status(std::make_error_code(std::errc::invalid_argument), "trigram file: " + what);
}

// The trigram at byte j of an already folded string: its three bytes as one 24-bit key.
std::uint32_t trigram_at(std::string_view s, std::size_t j) {
    return (std::uint32_t{static_cast<unsigned char>(s[j])} << 16) |
           (std::uint32_t{static_cast<unsigned char>(s[j + 1])} << 8) |
           std::uint32_t{static_cast<unsigned char>(s[j + 2])};
}

unsigned varint_size(std::uint32_t v) {
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

std::uint8_t* put_varint(std::uint8_t* p, std::uint32_t v) {
    while (v >= 0x80) {
        *p++ = static_cast<std::uint8_t>(v | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<std::uint8_t>(v);
    return p;
}

// Per possible trigram while building: id + 1 of the last name added to its list (0: none yet)
// and the list's size in bytes (after the counting pass: its key's slot). One 8-byte entry, so
// that a posting touches one cache line.
struct BuildEntry {
    std::uint32_t last;
    std::uint32_t size;
};

// The dense table of every possible trigram (128 MiB of zeroed virtual memory: only the pages
// of trigrams that occur are ever touched). On huge pages for big bases: each posting lands on an
// unpredictable entry, and with 4 KiB pages nearly every one would also miss the TLB.
class BuildTable {
  public:
    explicit BuildTable(bool huge) {
        void* p =
            ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        if (huge) (void)::madvise(p, kBytes, MADV_HUGEPAGE);
        entries_ = static_cast<BuildEntry*>(p);
    }
    ~BuildTable() { ::munmap(entries_, kBytes); }
    BuildTable(const BuildTable&) = delete;
    BuildTable& operator=(const BuildTable&) = delete;
    BuildEntry& operator[](std::uint32_t t) { return entries_[t]; }

  private:
    static constexpr std::size_t kBytes = std::size_t{kTrigramSpace} * sizeof(BuildEntry);
    BuildEntry* entries_;
};

// Calls f(trigram, entry, delta) for each distinct trigram of each name in id order (a name with
// a repeated trigram is listed once: its list's last id is already this one). False if
// cancelled.
template <typename F>
bool for_each_posting(const NameFile& base, BuildTable& table, const std::atomic<bool>* cancel,
                      F&& f) {
    for (std::size_t i = 0; i < base.size(); ++i) {
        if (i % kCancelEvery == 0 && cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
            return false;
        }
        const std::string_view name = base.folded_name(i);
        const auto mark = static_cast<std::uint32_t>(i + 1);
        for (std::size_t j = 0; j + 3 <= name.size(); ++j) {
            const std::uint32_t t = trigram_at(name, j);
            BuildEntry& e = table[t];
            if (e.last == mark) continue;
            f(t, e, mark - 1 - e.last);  // the distance from the previous id + 1 (0: first id)
            e.last = mark;
        }
    }
    return true;
}

// A file created for writing, removed unless committed.
class TempFile {
  public:
    explicit TempFile(std::string path) : path_(std::move(path)) {}
    ~TempFile() {
        if (map_ != nullptr) ::munmap(map_, size_);
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(path_.c_str());
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;

    core::Status create_mapped(std::size_t size) {
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd_ < 0) return errno_status("creating " + path_);
        if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
            return errno_status("sizing " + path_);
        }
        // posix_fallocate: a full disk fails here, not as SIGBUS on a store into the mapping.
        if (const int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(size)); err != 0) {
            errno = err;
            return errno_status("allocating " + path_);
        }
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        if (p == MAP_FAILED) return errno_status("mapping " + path_);
        map_ = p;
        size_ = size;
        return {};
    }
    [[nodiscard]] char* data() const { return static_cast<char*>(map_); }

    // Unmaps, fsyncs and renames to `final_path`, then fsyncs the directory.
    core::Status commit(const std::string& final_path) {
        ::munmap(map_, size_);
        map_ = nullptr;
        if (::fsync(fd_) != 0) return errno_status("fsync " + path_);
        if (::rename(path_.c_str(), final_path.c_str()) != 0) {
            return errno_status("renaming " + path_);
        }
        committed_ = true;
        fsync_parent_dir(final_path);
        return {};
    }

  private:
    std::string path_;
    int fd_ = -1;
    void* map_ = nullptr;
    std::size_t size_ = 0;
    bool committed_ = false;
};

}  // namespace

NameTrigrams::~NameTrigrams() {
    if (map_ != nullptr) ::munmap(map_, size_);
}

core::Status NameTrigrams::build(const NameFile& base, const std::string& path,
                                 const std::atomic<bool>* cancel) {
    if (base.size() > kMaxNames) return invalid("too many names for 32-bit ids");
    const auto cancelled = [] {
        return core::Status(std::make_error_code(std::errc::operation_canceled),
                            "trigram lists: build cancelled");
    };
    BuildTable table(base.size() >= (std::size_t{1} << 20));
    Header h;
    std::vector<std::uint32_t> keys;  // each trigram that occurs, as first met
    if (!for_each_posting(base, table, cancel,
                          [&](std::uint32_t t, BuildEntry& e, std::uint32_t delta) {
                              if (e.size == 0) keys.push_back(t);
                              e.size += varint_size(delta);
                              ++h.postings;
                          })) {
        return cancelled();
    }
    // Keys in ascending order and each list's offset; the table's entries become slots. (The
    // keys are sorted rather than the table scanned: its untouched pages stay untouched.)
    std::sort(keys.begin(), keys.end());
    std::vector<std::uint64_t> offsets;
    offsets.reserve(keys.size() + 1);
    for (std::size_t k = 0; k < keys.size(); ++k) {
        BuildEntry& e = table[keys[k]];
        e.last = 0;
        offsets.push_back(h.list_bytes);
        h.list_bytes += e.size;
        e.size = static_cast<std::uint32_t>(k);
    }
    offsets.push_back(h.list_bytes);

    h.version = kFormatVersion;
    h.header_size = kHeaderSize;
    h.base_generation = base.generation();
    h.base_names = base.size();
    h.base_checksum = base.body_checksum();
    h.keys = keys.size();
    Layout l{};
    if (!layout(h, &l)) return invalid("lists too large");
    h.file_size = l.end;

    TempFile out(path + ".tmp");
    if (auto s = out.create_mapped(l.end); !s) return s;
    char* p = out.data();
    if (!keys.empty()) std::memcpy(p + l.keys, keys.data(), keys.size() * 4);
    std::memcpy(p + l.offsets, offsets.data(), offsets.size() * 8);
    keys = {};
    offsets.pop_back();  // now each list's write cursor
    auto* lists = reinterpret_cast<std::uint8_t*>(p + l.lists);
    if (!for_each_posting(
            base, table, cancel, [&](std::uint32_t, BuildEntry& e, std::uint32_t delta) {
                std::uint64_t& at = offsets[e.size];
                at = static_cast<std::uint64_t>(put_varint(lists + at, delta) - lists);
            })) {
        return cancelled();
    }
    std::memcpy(p, kMagic, sizeof kMagic);
    put_field(p, 8, h.version);
    put_field(p, 12, h.header_size);
    put_field(p, 16, h.base_generation);
    put_field(p, 24, h.base_names);
    put_field(p, 32, h.base_checksum);
    put_field(p, 40, h.keys);
    put_field(p, 48, h.list_bytes);
    put_field(p, 56, h.postings);
    put_field(p, 64, h.file_size);
    put_field(p, kBodyChecksumAt, XXH3_64bits(p + kHeaderSize, l.end - kHeaderSize));
    put_field(p, kChecksumAt, fnv1a(p, kChecksumAt));
    return out.commit(path);
}

core::Status NameTrigrams::open(const std::string& path, const NameFile& base,
                                std::shared_ptr<const NameTrigrams>* out) {
    void* map = nullptr;
    std::size_t size = 0;
    if (auto s = map_read_only(path, kHeaderSize, "trigram file", &map, &size); !s) return s;
    std::unique_ptr<NameTrigrams> lists(new NameTrigrams());
    lists->map_ = map;
    lists->size_ = size;
    if (auto s = lists->attach(base); !s) return s;
    *out = std::move(lists);
    return {};
}

core::Status NameTrigrams::attach(const NameFile& base) {
    const char* image = static_cast<const char*>(map_);
    if (std::memcmp(image, kMagic, sizeof kMagic) != 0) return invalid("not a trigram file");
    if (get_field<std::uint64_t>(image, kChecksumAt) != fnv1a(image, kChecksumAt)) {
        return invalid("header checksum mismatch");
    }
    Header h;
    h.version = get_field<std::uint32_t>(image, 8);
    h.header_size = get_field<std::uint32_t>(image, 12);
    h.base_generation = get_field<std::int64_t>(image, 16);
    h.base_names = get_field<std::uint64_t>(image, 24);
    h.base_checksum = get_field<std::uint64_t>(image, 32);
    h.keys = get_field<std::uint64_t>(image, 40);
    h.list_bytes = get_field<std::uint64_t>(image, 48);
    h.postings = get_field<std::uint64_t>(image, 56);
    h.file_size = get_field<std::uint64_t>(image, 64);
    if (h.version != kFormatVersion) {
        return invalid("format version " + std::to_string(h.version) + ", expected " +
                       std::to_string(kFormatVersion));
    }
    if (h.header_size != kHeaderSize) return invalid("unexpected header size");
    base_generation_ = h.base_generation;
    base_names_ = h.base_names;
    base_checksum_ = h.base_checksum;
    if (!built_for(base)) return invalid("built for another name file");
    Layout l{};
    if (!layout(h, &l) || l.end != h.file_size || h.file_size != size_) {
        return invalid("sizes do not match the file's length (truncated?)");
    }
    if (get_field<std::uint64_t>(image, kBodyChecksumAt) !=
        XXH3_64bits(image + kHeaderSize, size_ - kHeaderSize)) {
        return invalid("body checksum mismatch");
    }
    key_count_ = h.keys;
    list_bytes_ = h.list_bytes;
    postings_ = h.postings;
    keys_ = reinterpret_cast<const std::uint32_t*>(image + l.keys);
    offsets_ = reinterpret_cast<const std::uint64_t*>(image + l.offsets);
    lists_ = reinterpret_cast<const std::uint8_t*>(image + l.lists);
    // Every offset a search follows, checked once. (A list's varints are bounded by its end
    // and its ids by the base's size as they are read.)
    if (offsets_[0] != 0 || offsets_[key_count_] != list_bytes_) return invalid("list offsets");
    for (std::size_t k = 0; k < key_count_; ++k) {
        if (keys_[k] >= kTrigramSpace || (k > 0 && keys_[k] <= keys_[k - 1]) ||
            offsets_[k + 1] <= offsets_[k]) {
            return invalid("keys or list offsets");
        }
    }
    return {};
}

bool NameTrigrams::built_for(const NameFile& base) const {
    return base_generation_ == base.generation() && base_names_ == base.size() &&
           base_checksum_ == base.body_checksum();
}

NameTrigrams::Candidates::Candidates(const NameTrigrams& lists, std::string_view folded_needle) {
    std::vector<std::uint32_t> wanted;
    for (std::size_t j = 0; j + 3 <= folded_needle.size(); ++j) {
        wanted.push_back(trigram_at(folded_needle, j));
    }
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    const std::uint32_t* keys_end = lists.keys_ + lists.key_count_;
    for (const std::uint32_t t : wanted) {
        const std::uint32_t* it = std::lower_bound(lists.keys_, keys_end, t);
        if (it == keys_end || *it != t) {
            none_ = true;  // no name holds this trigram
            cursors_.clear();
            return;
        }
        const auto k = static_cast<std::size_t>(it - lists.keys_);
        cursors_.push_back(
            Cursor{lists.lists_ + lists.offsets_[k], lists.lists_ + lists.offsets_[k + 1], 0});
    }
    std::sort(cursors_.begin(), cursors_.end(),
              [](const Cursor& a, const Cursor& b) { return a.end - a.p < b.end - b.p; });
    for (Cursor& c : cursors_) {
        // Decode each first id: the "previous id + 1" of an unstarted list is 0.
        const std::uint8_t* p = c.p;
        std::uint64_t v = 0;
        unsigned shift = 0;
        for (;;) {
            if (p == c.end || shift > 28) {
                c.id = kNone;
                break;
            }
            const std::uint8_t b = *p++;
            v |= std::uint64_t{b & 0x7fu} << shift;
            shift += 7;
            if (b < 0x80) {
                c.id = v;
                break;
            }
        }
        c.p = p;
        if (c.id == kNone || c.id >= lists.base_names_) none_ = true;
    }
    max_id_ = lists.base_names_;
}

void NameTrigrams::Candidates::advance(Cursor& c, std::uint64_t target, std::uint64_t max_id) {
    while (c.id < target) {
        // Decode the next delta; the next id is the previous one + 1 + delta.
        std::uint64_t v = 0;
        unsigned shift = 0;
        for (;;) {
            if (c.p == c.end || shift > 28) {  // the list's end (or a damaged varint)
                c.id = kNone;
                return;
            }
            const std::uint8_t b = *c.p++;
            v |= std::uint64_t{b & 0x7fu} << shift;
            shift += 7;
            if (b < 0x80) break;
        }
        c.id += 1 + v;
        if (c.id >= max_id) {
            c.id = kNone;
            return;
        }
    }
}

std::uint64_t NameTrigrams::Candidates::next(std::uint64_t from) {
    if (none_ || cursors_.empty()) return kNone;
    // Leapfrog: every cursor moves to the target; one that overshoots raises the target and the
    // round starts again. All at the target: a candidate. Each cursor only moves forward, so a
    // search costs at most one pass over each of its lists.
    std::uint64_t target = from;
    for (std::size_t i = 0; i < cursors_.size();) {
        advance(cursors_[i], target, max_id_);
        const std::uint64_t at = cursors_[i].id;
        if (at == kNone) {
            none_ = true;
            return kNone;
        }
        if (at > target) {
            target = at;
            i = (i == 0) ? 1 : 0;  // the others must reach the new target
            continue;
        }
        ++i;
    }
    return target;
}

}  // namespace wsindex::storage
