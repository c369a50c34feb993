// The directory digest's entry hash.
#include "storage/dir_digest.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace wsindex::storage {
namespace {

// splitmix64's finalizer: every input bit moves every output bit.
std::uint64_t mix64(std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

// A directory's digest is the sum of this over its entries: order-free (entries arrive in
// any order). Each step below is a bijection of the state for a fixed input word (xor with
// the word, multiply by an odd constant, xor-shift), so changing any one name byte or stored
// column always changes the entry's hash; a directory's sum then misses a change only with
// ~2^-64 odds. One multiply per word and one final mix: ~70 instructions per entry, where a
// full mix per field cost ~250 (the rescan writer's largest own cost, callgrind).
// Changing this function changes every stored digest: the first rescan after such an
// upgrade rewrites each directory once (nothing is lost, it is only slower once).
std::uint64_t entry_hash(const core::WalkResult& r) {
    constexpr std::uint64_t kOdd = 0x9e3779b97f4a7c15ULL;
    const std::string_view name = r.name();
    std::uint64_t h = 0xcbf29ce484222325ULL ^ name.size();
    for (std::size_t i = 0; i < name.size(); i += 8) {
        std::uint64_t word = 0;  // the last word zero-padded: the length is in h already
        std::memcpy(&word, name.data() + i, std::min<std::size_t>(8, name.size() - i));
        h = (h ^ word) * kOdd;
        h ^= h >> 29;
    }
    const std::uint64_t fields[] = {
        static_cast<std::uint64_t>(r.type),
        r.has_stat ? 1u : 0u,
        r.size,
        r.blocks,
        static_cast<std::uint64_t>(r.mtime_ns),
        static_cast<std::uint64_t>(r.ctime_ns),
        r.mode,
        r.uid,
        r.gid,
        r.dev,
        r.ino,
        r.nlink,
        static_cast<std::uint64_t>(r.error),
    };
    for (const std::uint64_t f : fields) {
        h = (h ^ f) * kOdd;
        h ^= h >> 29;
    }
    return mix64(h);
}

}  // namespace wsindex::storage
