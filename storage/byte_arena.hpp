// ByteArena: byte strings copied into fixed blocks that never move, for sets of many short
// strings that live and die together (the paths of a scan's directories).
//
// Why not std::string per entry: ~60-byte paths are past the small-string buffer, so each is
// a malloc and a free, and 47k of them per 1M-entry scan. Why not one growing std::string:
// growing copies everything and holds both copies meanwhile (+15 MiB of peak RSS on the
// lopsided 1M tree). Views returned by store() stay valid until clear().
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace wsindex::storage {

class ByteArena {
  public:
    static constexpr std::size_t kBlockSize = 256 * 1024;
    // A piece longer than this gets a block of its own (paths may exceed PATH_MAX).
    static constexpr std::size_t kLongPiece = 4096;

    // Copies `bytes` followed by `suffix` (contiguous) and returns a view of the copy.
    std::string_view store(std::string_view bytes, std::string_view suffix = {});
    // Frees every block; every view returned so far dangles.
    void clear();
    [[nodiscard]] std::size_t blocks() const { return blocks_.size(); }

  private:
    std::vector<std::unique_ptr<char[]>> blocks_;
    std::size_t free_ = 0;  // bytes left at the end of blocks_.back() (0: no open block)
};

}  // namespace wsindex::storage
