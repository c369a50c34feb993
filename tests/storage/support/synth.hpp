// Test support: WalkResults built by hand, numbered the way the walker numbers them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/walk_result.hpp"

namespace wsindex::storage::test {

// Builds WalkResults by hand, as the walker would number them.
class Synth {
  public:
    explicit Synth(const std::string& root) {
        core::WalkResult r;
        r.path = root;
        r.dir_id = 1;
        r.type = core::EntryType::Directory;
        r.has_stat = true;
        r.size = 10;
        r.blocks = 1;
        r.nlink = 2;
        r.dev = 1;
        r.mode = 040755;
        rs_.push_back(r);
    }
    std::uint64_t dir(std::uint64_t parent, const std::string& name) {
        core::WalkResult r = make(parent, name);
        r.type = core::EntryType::Directory;
        r.dir_id = next_++;
        r.mode = 040755;
        r.size = 10;
        r.blocks = 1;
        r.nlink = 2;
        rs_.push_back(r);
        return r.dir_id;
    }
    void file(std::uint64_t parent, const std::string& name, std::uint64_t size,
              std::uint64_t blocks, std::uint64_t ino = 0, std::uint64_t nlink = 1) {
        core::WalkResult r = make(parent, name);
        r.type = core::EntryType::File;
        r.size = size;
        r.blocks = blocks;
        r.ino = ino ? ino : std::hash<std::string>{}(r.path) % 100000;
        r.nlink = nlink;
        rs_.push_back(r);
    }
    // The last record added, to adjust (mtime, uid, type ...).
    core::WalkResult& last() { return rs_.back(); }
    std::vector<core::WalkResult> results() const { return rs_; }

  private:
    core::WalkResult make(std::uint64_t parent, const std::string& name) {
        core::WalkResult r;
        std::string parent_path;
        std::uint32_t depth = 0;
        for (const auto& x : rs_) {
            if (x.dir_id == parent) {
                parent_path = x.path;
                depth = x.depth;
            }
        }
        r.path = parent_path + "/" + name;
        r.name_offset = static_cast<std::uint32_t>(parent_path.size() + 1);
        r.parent_id = parent;
        r.depth = depth + 1;
        r.has_stat = true;
        r.dev = 1;
        r.mode = 0100644;
        return r;
    }
    std::vector<core::WalkResult> rs_;
    std::uint64_t next_ = 2;
};

}  // namespace wsindex::storage::test
