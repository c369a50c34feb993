// A trigram posting-list index over the names (plocate's method in outline): for every distinct
// trigram of the ASCII-folded names, the sorted ids of the names holding it, delta-encoded as
// varints. A query intersects the lists of the needle's trigrams and verifies each candidate.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "storage/name_file.hpp"

namespace wsindex::bench {

class TrigramIndex {
  public:
    // Two passes over the names: sizes of every list, then the lists themselves.
    static TrigramIndex build(const storage::NameFile& names);

    // Bytes of the index (keys, offsets, postings), not counting the names it verifies against.
    [[nodiscard]] std::size_t bytes() const;
    [[nodiscard]] std::size_t trigrams() const { return keys_.size(); }
    [[nodiscard]] std::uint64_t postings() const { return postings_; }

    // The ids of the names holding `needle` (case-sensitive), in index order. False when the
    // needle is shorter than a trigram: the index cannot narrow it and the caller must scan.
    bool search(const storage::NameFile& names, std::string_view needle,
                std::vector<std::uint32_t>* out) const;

  private:
    std::vector<std::uint32_t> keys_;     // distinct trigrams, ascending
    std::vector<std::uint64_t> offsets_;  // keys_.size() + 1: each list's first byte in lists_
    std::vector<std::uint8_t> lists_;     // the posting lists back to back
    std::uint64_t postings_ = 0;
};

}  // namespace wsindex::bench
