#include "storage/byte_arena.hpp"

#include <cstring>

namespace wsindex::storage {

std::string_view ByteArena::store(std::string_view bytes, std::string_view suffix) {
    const std::size_t size = bytes.size() + suffix.size();
    char* at = nullptr;
    if (size > kLongPiece) {
        // Its own block, inserted before the open one so that the open one's free space
        // (free_ counts from blocks_.back()) stays usable.
        auto own = std::make_unique_for_overwrite<char[]>(size);
        at = own.get();
        const auto where = free_ == 0 ? blocks_.end() : blocks_.end() - 1;
        blocks_.insert(where, std::move(own));
    } else {
        if (free_ < size) {
            blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockSize));
            free_ = kBlockSize;
        }
        at = blocks_.back().get() + (kBlockSize - free_);
        free_ -= size;
    }
    if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
    if (!suffix.empty()) std::memcpy(at + bytes.size(), suffix.data(), suffix.size());
    return {at, size};
}

void ByteArena::clear() {
    blocks_.clear();
    blocks_.shrink_to_fit();
    free_ = 0;
}

}  // namespace wsindex::storage
