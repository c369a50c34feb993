// TreeMutator: seeded changes to a directory tree between scans (files grown, removed and
// created, directories created), so that the index before a scan and after it differ in rows
// spread over many directories.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace wsindex::reliability::test {

class TreeMutator {
  public:
    // Lists the directories at and below `area` (which the mutations stay inside).
    explicit TreeMutator(const std::string& area);

    // Changes `dirs` directories drawn from `rng`: in each, one of: a file grown, a file
    // removed, a file created, a directory with files created. Every round creates at least one
    // entry, so the tree always differs from before. Fails the test on any error.
    void mutate(std::mt19937_64& rng, std::size_t dirs = 8);

    [[nodiscard]] std::size_t directories() const { return dirs_.size(); }

  private:
    std::vector<std::string> dirs_;
    std::uint64_t round_ = 0;
};

}  // namespace wsindex::reliability::test
