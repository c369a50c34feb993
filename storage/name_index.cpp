// NameIndex: loading the names of the visible index and locating matches with memmem.
#include "storage/name_index.hpp"

#include <string.h>  // memmem (GNU)

#include <algorithm>

#include "storage/database.hpp"

namespace wsindex::storage {

core::Status NameIndex::load(Database& db, NameIndex* out) {
    NameIndex index;
    // One read transaction: the generation and the names come from the same snapshot.
    if (auto s = db.exec("BEGIN"); !s) return s;
    core::Status s =
        db.query_int64("SELECT value FROM meta WHERE key = 'generation'", &index.generation_);
    Statement names;
    if (s) {
        // Joined with dirs: rows of running scans and replaced rows awaiting collection
        // have no visible directory. Directory by directory, in id order.
        s = db.prepare(
            "SELECT d.id, d.prefix, e.name, e.type FROM dirs AS d JOIN entries AS e ON e.dir = "
            "d.id",
            &names);
    }
    for (bool row = true; s;) {
        s = names.step(&row);
        if (!s || !row) break;
        const std::int64_t dir = names.column_int64(0);
        if (index.dir_ids_.empty() || index.dir_ids_.back() != dir) {
            if (index.dir_ids_.size() == UINT32_MAX) {
                s = core::Status(std::make_error_code(std::errc::value_too_large),
                                 "name index: too many directories");
                break;
            }
            index.dir_ids_.push_back(dir);
            index.dir_starts_.push_back(index.dir_prefixes_.size());
            index.dir_prefixes_.append(names.column_bytes(1));
        }
        index.dir_of_.push_back(static_cast<std::uint32_t>(index.dir_ids_.size() - 1));
        const std::string_view type = names.column_bytes(3);
        index.types_.push_back(type.empty() ? '?' : type[0]);
        index.starts_.push_back(index.names_.size());
        index.names_.append(names.column_bytes(2));
        index.names_.push_back('\0');
    }
    names = {};
    (void)db.exec("COMMIT");
    if (!s) return s;
    index.folded_ = index.names_;
    for (char& c : index.folded_) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    index.names_.shrink_to_fit();
    index.starts_.shrink_to_fit();
    index.dir_of_.shrink_to_fit();
    index.types_.shrink_to_fit();
    index.dir_ids_.shrink_to_fit();
    index.dir_starts_.shrink_to_fit();
    index.dir_prefixes_.shrink_to_fit();
    *out = std::move(index);
    return {};
}

std::size_t NameIndex::memory_bytes() const {
    return names_.capacity() + folded_.capacity() + starts_.capacity() * sizeof(std::uint64_t) +
           dir_of_.capacity() * sizeof(std::uint32_t) + types_.capacity() +
           dir_ids_.capacity() * sizeof(std::int64_t) +
           dir_starts_.capacity() * sizeof(std::uint64_t) + dir_prefixes_.capacity();
}

std::size_t NameIndex::name_at(std::size_t pos, std::size_t from) const {
    // Galloping from `from` rather than a binary search of every start: consecutive hits are
    // usually a few dozen names apart, so this probes a few nearby cache lines where the
    // search of 1M starts took ~20 probes, most of them cache misses (name_at was a tenth of a
    // find's CPU once the reply was cheap). Invariant: starts_[lo] <= pos.
    std::size_t lo = from;
    std::size_t step = 1;
    while (lo + step < starts_.size() && starts_[lo + step] <= pos) {
        lo += step;
        step *= 2;
    }
    const std::size_t hi = std::min(lo + step, starts_.size());
    const auto it = std::upper_bound(starts_.begin() + static_cast<std::ptrdiff_t>(lo),
                                     starts_.begin() + static_cast<std::ptrdiff_t>(hi), pos);
    return static_cast<std::size_t>(it - starts_.begin()) - 1;
}

std::size_t NameIndex::find(const std::string& haystack, std::string_view needle,
                            std::size_t from) const {
    if (needle.empty()) return from < haystack.size() ? from : std::string::npos;
    const void* hit =
        ::memmem(haystack.data() + from, haystack.size() - from, needle.data(), needle.size());
    if (hit == nullptr) return std::string::npos;
    return static_cast<std::size_t>(static_cast<const char*>(hit) - haystack.data());
}

}  // namespace wsindex::storage
