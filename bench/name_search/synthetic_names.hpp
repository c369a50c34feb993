// Synthetic file names for the name-search benchmark: deterministic for a seed, shaped like the
// names of real trees (words, digits, hashes, separators, common extensions; 5 to 40 bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace wsindex::bench {

// The names back to back, each followed by '\0'; starts has one entry per name plus the end.
struct NameSet {
    std::string bytes;
    std::vector<std::uint64_t> starts;
    [[nodiscard]] std::size_t size() const { return starts.empty() ? 0 : starts.size() - 1; }
};

// The names one at a time, for callers that must not hold them all (bench/synth_index writes
// 100M of them): the same seed always gives the same sequence. "zephyr" is a word of about one
// name in 100,000, so that a rare fragment has a few matches at every size.
class NameGenerator {
  public:
    explicit NameGenerator(std::uint64_t seed) : state_(seed) {}
    // Replaces `name` with the next name (5 to 40 bytes, never '/' or '\0').
    void next(std::string& name);

  private:
    std::uint64_t state_;  // splitmix64's
};

// `n` names: NameGenerator(seed)'s first n.
NameSet make_names(std::size_t n, std::uint64_t seed);

}  // namespace wsindex::bench
