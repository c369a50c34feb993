// NameTrigrams: trigram posting lists over the names of one NameFile (the immutable base of the
// name index), in a file of their own next to it (`<db>.names.tri`), mapped read-only.
//
// Why: a substring search of the base is a memmem pass over every name. That is ~6 ms at 1M
// names but ~45 ms at 10M and 0.3-0.8 s at 100M, where plocate answers a selective fragment in
// ~20 ms whole process. The lists answer a selective fragment in microseconds at any size
// (measured, docs/performance.md "Name search: parallel scan or trigram posting lists"): for every
// distinct trigram of the folded names, the ascending ids of the names holding it. A search walks
// the lists of its needle's trigrams together (a leapfrog join: each list skips to the largest id
// any other list is at) and checks each name they agree on, in id order — the base's order, so
// the layer of live changes and the masks apply exactly as for the scan.
//
// Folded trigrams (ASCII A-Z as a-z) serve both cases: a case-sensitive search verifies against
// the name's bytes, an ignore-case one against the folded copy. Needles shorter than a trigram
// gain nothing from the lists; the caller scans.
//
// Built in the background after a base is in place (the scan serves meanwhile), only for bases
// of at least `[query] trigram_min_names` names: below a few million names the scan is fast
// enough, and the lists cost ~20 bytes per name and ~0.6 us of CPU per name to build.
//
// Format (docs/schema.md, "The trigram file"): a 128-byte header (magic, format version, the
// base's generation, name count and body checksum it was built from, counts, the file size, a
// checksum of the body and one of the header), then the sorted trigram keys (u32), the lists'
// offsets (u64, one more than keys) and the lists (each id as the varint of its distance from the
// previous id + 1). open() checks every size, the keys' order, every offset and the body's
// checksum before the first search: a file that fails is rebuilt, never trusted.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "storage/name_file.hpp"

namespace wsindex::storage {

class NameTrigrams {
  public:
    static constexpr std::uint32_t kFormatVersion = 1;

    NameTrigrams(const NameTrigrams&) = delete;
    NameTrigrams& operator=(const NameTrigrams&) = delete;
    ~NameTrigrams();

    // Builds the lists of `base` into `path` (a temporary file in the same directory, filled
    // through a shared mapping so that the lists are page cache, not the daemon's anonymous
    // memory; fsync, rename, fsync of the directory). Anonymous memory while building: a 128 MiB
    // table of every possible trigram plus 12 bytes per distinct one. `cancel`, polled every few
    // thousand names, abandons the build (Status operation_canceled, no file left).
    static core::Status build(const NameFile& base, const std::string& path,
                              const std::atomic<bool>* cancel = nullptr);
    // Maps `path` read-only and validates it against `base`: a file built for another base (or
    // damaged, truncated, of another format) is refused with a Status naming the check.
    static core::Status open(const std::string& path, const NameFile& base,
                             std::shared_ptr<const NameTrigrams>* out);

    // Whether these lists were built from `base` (its generation, name count and checksum).
    [[nodiscard]] bool built_for(const NameFile& base) const;
    [[nodiscard]] std::size_t trigrams() const { return key_count_; }
    [[nodiscard]] std::uint64_t postings() const { return postings_; }
    [[nodiscard]] std::size_t file_bytes() const { return size_; }

    // The names whose folded bytes hold every trigram of a needle, in ascending id order. Only
    // for needles of at least 3 bytes, already folded. Cheap to make (a binary search per
    // trigram); next() calls must come with non-decreasing `from`.
    class Candidates {
      public:
        Candidates(const NameTrigrams& lists, std::string_view folded_needle);
        // The smallest candidate id >= from, or kNone.
        std::uint64_t next(std::uint64_t from);
        static constexpr std::uint64_t kNone = UINT64_MAX;

      private:
        struct Cursor {
            const std::uint8_t* p;    // the next varint
            const std::uint8_t* end;  // of this list
            std::uint64_t id;         // the id the cursor is at; kNone once past the end
        };
        // Moves `c` to its first id >= target (kNone past its end or at an id >= max_id).
        static void advance(Cursor& c, std::uint64_t target, std::uint64_t max_id);
        std::vector<Cursor> cursors_;  // shortest list first
        std::uint64_t max_id_ = 0;     // the base's name count: larger ids are damage
        bool none_ = false;            // no (further) candidates
    };

  private:
    NameTrigrams() = default;
    core::Status attach(const NameFile& base);

    void* map_ = nullptr;
    std::size_t size_ = 0;
    std::int64_t base_generation_ = -1;
    std::uint64_t base_names_ = 0;
    std::uint64_t base_checksum_ = 0;
    std::uint64_t postings_ = 0;
    std::size_t key_count_ = 0;
    std::uint64_t list_bytes_ = 0;
    const std::uint32_t* keys_ = nullptr;     // key_count_, ascending
    const std::uint64_t* offsets_ = nullptr;  // key_count_ + 1, into lists_
    const std::uint8_t* lists_ = nullptr;
};

}  // namespace wsindex::storage
