// Trigram posting lists: a counting pass, a filling pass, and a query that starts from the
// shortest list and verifies the survivors with a substring search of the name.
#include "trigram_index.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <new>
#include <utility>

namespace wsindex::bench {
namespace {

constexpr std::size_t kTrigramSpace = std::size_t{1} << 24;

unsigned char fold(unsigned char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c - 'A' + 'a') : c;
}

std::uint32_t trigram_at(std::string_view s, std::size_t j) {
    return (std::uint32_t{fold(static_cast<unsigned char>(s[j]))} << 16) |
           (std::uint32_t{fold(static_cast<unsigned char>(s[j + 1]))} << 8) |
           fold(static_cast<unsigned char>(s[j + 2]));
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

const std::uint8_t* get_varint(const std::uint8_t* p, std::uint32_t* v) {
    std::uint32_t out = 0;
    for (unsigned shift = 0;; shift += 7) {
        const std::uint8_t b = *p++;
        out |= std::uint32_t{b & 0x7fu} << shift;
        if (b < 0x80) break;
    }
    *v = out;
    return p;
}

// Per trigram while building: its list's last id + 1 (0: empty) and its size in bytes (then its
// slot in keys_). One entry, so that a posting touches one cache line of the table.
struct BuildEntry {
    std::uint32_t last;
    std::uint32_t size;
};

// The dense table of every possible trigram (128 MiB), zeroed, on huge pages where the kernel
// allows: each posting lands on an unpredictable entry, and with 4 KiB pages nearly every one
// would also miss the TLB.
class BuildTable {
  public:
    BuildTable() {
        void* p =
            ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        (void)::madvise(p, kBytes, MADV_HUGEPAGE);
        entries_ = static_cast<BuildEntry*>(p);
    }
    ~BuildTable() { ::munmap(entries_, kBytes); }
    BuildTable(const BuildTable&) = delete;
    BuildTable& operator=(const BuildTable&) = delete;
    BuildEntry& operator[](std::uint32_t t) { return entries_[t]; }

  private:
    static constexpr std::size_t kBytes = kTrigramSpace * sizeof(BuildEntry);
    BuildEntry* entries_;
};

// Calls f(trigram) for each trigram of each name, with the name's id; ids ascend, so a list's
// last id tells whether this name is already in it (a name with a repeated trigram is listed
// once) and the delta to store. `last` holds id + 1 (0: the list is empty).
template <typename F>
void for_each_new_posting(const storage::NameFile& names, BuildTable& table, F&& f) {
    for (std::size_t i = 0; i < names.size(); ++i) {
        const std::string_view name = names.name(i);
        const auto id = static_cast<std::uint32_t>(i);
        for (std::size_t j = 0; j + 3 <= name.size(); ++j) {
            const std::uint32_t t = trigram_at(name, j);
            BuildEntry& e = table[t];
            if (e.last == id + 1) continue;
            f(e, id - e.last);
            e.last = id + 1;
        }
    }
}

}  // namespace

TrigramIndex TrigramIndex::build(const storage::NameFile& names) {
    TrigramIndex index;
    BuildTable table;
    for_each_new_posting(names, table, [&](BuildEntry& e, std::uint32_t delta) {
        e.size += varint_size(delta);
        ++index.postings_;
    });
    std::uint64_t total = 0;
    for (std::uint32_t t = 0; t < kTrigramSpace; ++t) {
        BuildEntry& e = table[t];
        e.last = 0;
        if (e.size == 0) continue;
        index.keys_.push_back(t);
        index.offsets_.push_back(total);
        total += e.size;
        e.size = static_cast<std::uint32_t>(index.keys_.size() - 1);
    }
    index.offsets_.push_back(total);
    index.lists_.resize(total);
    std::vector<std::uint64_t> cursor(index.offsets_.begin(), index.offsets_.end() - 1);
    std::uint8_t* lists = index.lists_.data();
    for_each_new_posting(names, table, [&](BuildEntry& e, std::uint32_t delta) {
        std::uint64_t& at = cursor[e.size];
        at = static_cast<std::uint64_t>(put_varint(lists + at, delta) - lists);
    });
    return index;
}

std::size_t TrigramIndex::bytes() const {
    return keys_.size() * sizeof(keys_[0]) + offsets_.size() * sizeof(offsets_[0]) + lists_.size();
}

bool TrigramIndex::search(const storage::NameFile& names, std::string_view needle,
                          std::vector<std::uint32_t>* out) const {
    out->clear();
    if (needle.size() < 3) return false;
    // The lists of the needle's distinct trigrams, shortest first.
    std::vector<std::pair<const std::uint8_t*, const std::uint8_t*>> lists;
    for (std::size_t j = 0; j + 3 <= needle.size(); ++j) {
        const std::uint32_t t = trigram_at(needle, j);
        const auto it = std::lower_bound(keys_.begin(), keys_.end(), t);
        if (it == keys_.end() || *it != t) return true;  // no name holds this trigram
        const auto k = static_cast<std::size_t>(it - keys_.begin());
        lists.emplace_back(lists_.data() + offsets_[k], lists_.data() + offsets_[k + 1]);
    }
    std::sort(lists.begin(), lists.end(),
              [](const auto& a, const auto& b) { return a.second - a.first < b.second - b.first; });
    lists.erase(std::unique(lists.begin(), lists.end()), lists.end());

    std::vector<std::uint32_t> candidates;
    std::uint32_t next = 0;  // id + 1 of the previous posting
    for (const std::uint8_t* p = lists[0].first; p < lists[0].second;) {
        std::uint32_t delta = 0;
        p = get_varint(p, &delta);
        candidates.push_back(next + delta);
        next += delta + 1;
    }
    for (std::size_t l = 1; l < lists.size() && !candidates.empty(); ++l) {
        std::size_t kept = 0;
        std::size_t c = 0;
        next = 0;
        for (const std::uint8_t* p = lists[l].first;
             p < lists[l].second && c < candidates.size();) {
            std::uint32_t delta = 0;
            p = get_varint(p, &delta);
            const std::uint32_t id = next + delta;
            next = id + 1;
            while (c < candidates.size() && candidates[c] < id) ++c;
            if (c < candidates.size() && candidates[c] == id) candidates[kept++] = candidates[c++];
        }
        candidates.resize(kept);
    }
    // The lists are of folded trigrams, and a name holding every trigram need not hold them in
    // sequence: each candidate is checked against its bytes.
    for (const std::uint32_t id : candidates) {
        if (names.name(id).find(needle) != std::string_view::npos) out->push_back(id);
    }
    return true;
}

}  // namespace wsindex::bench
