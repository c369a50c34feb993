// NameIndex: opening or building the base, layering re-read directories over it, and the
// in-order (optionally parallel) substring search of base plus layer.
#include "storage/name_index.hpp"

#include <algorithm>
#include <optional>

#include "core/range_executor.hpp"
#include "storage/database.hpp"
#include "storage/read_transaction.hpp"

namespace wsindex::storage {
namespace {

// Names per block: the unit a worker searches and keeps hits of (a few hundred KiB of names).
constexpr std::size_t kBlock = 16384;
// A window is searched in parallel and its hits delivered before the next one starts: the
// first is small so that a limited find that is satisfied early stops early; later ones grow
// so that the workers' hand-off is paid rarely; none is large so that memory stays bounded.
constexpr std::size_t kFirstWindowBlocks = 4;
constexpr std::size_t kMaxWindowBlocks = 64;

void fold(std::string& s) {
    for (char& c : s) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
}

core::Status read_generation(Database& db, std::int64_t* out) {
    return db.query_int64("SELECT value FROM meta WHERE key = 'generation'", out);
}

}  // namespace

core::Status NameIndex::load(Database& db, NameIndex* out) {
    DatabaseIdentity identity;  // an in-memory image belongs to no file
    std::shared_ptr<const NameFile> base;
    if (auto s = NameFile::build(db, identity, &base); !s) return s;
    NameIndex index;
    index.generation_ = base->generation();
    index.base_ = std::move(base);
    *out = std::move(index);
    return {};
}

core::Status NameIndex::open_or_build(Database& db, const std::string& path, NameIndex* out,
                                      bool* rebuilt, core::Status* write_error) {
    *rebuilt = false;
    *write_error = {};
    DatabaseIdentity identity;
    if (auto s = DatabaseIdentity::of(db.path(), &identity); !s) return s;
    std::int64_t current = -1;
    if (auto s = read_generation(db, &current); !s) return s;
    std::shared_ptr<const NameFile> base;
    // Any failure to open (missing, truncated, foreign, damaged, other format) means: rebuild.
    if (auto s = NameFile::open(path, identity, &base); !s || base->generation() != current) {
        base.reset();
        *rebuilt = true;
        // Built into the file and served from its mapping: the image never sits in the
        // daemon's anonymous memory (at 100M names build() peaked at 8 GiB).
        *write_error = NameFile::build_file(db, identity, path);
        if (*write_error) *write_error = NameFile::open(path, identity, &base);
        if (!*write_error) {
            // The file cannot be written or read back (a full disk, a read-only directory):
            // built in memory and served from there.
            base.reset();
            if (auto b = NameFile::build(db, identity, &base); !b) return b;
        }
    }
    NameIndex index;
    index.generation_ = base->generation();
    index.base_ = std::move(base);
    *out = std::move(index);
    return {};
}

core::Status NameIndex::with_dirs(Database& db, const std::vector<std::int64_t>& dirs,
                                  NameIndex* out, std::int64_t* read_generation_out) const {
    auto layer = layer_ ? std::make_shared<Layer>(*layer_) : std::make_shared<Layer>();
    if (base_ && layer->masked.size() != base_->dir_count()) {
        layer->masked.assign(base_->dir_count(), false);
    }
    ReadTransaction txn(db);
    if (auto s = txn.begin(); !s) return s;
    std::int64_t generation = -1;
    if (auto s = read_generation(db, &generation); !s) return s;
    Statement prefix_of;
    Statement names_of;
    if (auto s = db.prepare("SELECT prefix FROM dirs WHERE id = ?", &prefix_of); !s) return s;
    if (auto s =
            db.prepare("SELECT name, type FROM entries WHERE dir = ? ORDER BY name", &names_of);
        !s) {
        return s;
    }
    for (const std::int64_t id : dirs) {
        auto dir = std::make_shared<LayerDir>();
        bool exists = false;
        prefix_of.bind_int64(1, id);
        if (auto s = prefix_of.step(&exists); !s) return s;
        if (exists) dir->prefix.assign(prefix_of.column_bytes(0));
        prefix_of.reset();
        if (exists) {
            names_of.bind_int64(1, id);
            for (bool row = true;;) {
                if (auto s = names_of.step(&row); !s) return s;
                if (!row) break;
                dir->starts.push_back(static_cast<std::uint32_t>(dir->names.size()));
                dir->names.append(names_of.column_bytes(0));
                dir->names.push_back('\0');
                const std::string_view type = names_of.column_bytes(1);
                dir->types.push_back(type.empty() ? '?' : type[0]);
            }
            names_of.reset();
        }
        dir->folded = dir->names;
        fold(dir->folded);
        if (auto it = layer->dirs.find(id); it != layer->dirs.end()) {
            layer->names -= it->second->starts.size();
            layer->bytes -= it->second->names.size() * 2 + it->second->prefix.size() +
                            it->second->starts.size() * 5;
            layer->dirs.erase(it);
        }
        const std::int64_t ordinal = base_ ? base_->dir_ordinal(id) : -1;
        if (ordinal >= 0 && !layer->masked[static_cast<std::size_t>(ordinal)]) {
            const auto d = static_cast<std::size_t>(ordinal);
            layer->masked[d] = true;
            layer->masked_names += base_->dir_first(d + 1) - base_->dir_first(d);
        }
        if (dir->starts.empty()) continue;  // no names: the mask alone says it
        layer->names += dir->starts.size();
        layer->bytes += dir->names.size() * 2 + dir->prefix.size() + dir->starts.size() * 5;
        layer->dirs.emplace(id, std::move(dir));
    }
    NameIndex index;
    index.base_ = base_;
    index.trigrams_ = trigrams_;
    index.layer_ = std::move(layer);
    index.generation_ = generation;
    *read_generation_out = generation;
    *out = std::move(index);
    return {};
}

NameIndex NameIndex::with_trigrams(std::shared_ptr<const NameTrigrams> lists) const {
    NameIndex index = *this;
    index.trigrams_ = std::move(lists);
    return index;
}

std::size_t NameIndex::trigram_bytes() const { return trigrams_ ? trigrams_->file_bytes() : 0; }

std::size_t NameIndex::size() const {
    return base_size() + layer_names() - (layer_ ? layer_->masked_names : 0);
}

std::size_t NameIndex::memory_bytes() const {
    std::size_t bytes = base_ && !base_->mapped() ? base_->image_bytes() : 0;
    if (layer_) bytes += layer_->bytes + layer_->masked.size() / 8;
    return bytes;
}

void NameIndex::search(std::string_view needle, bool ignore_case, const MatchFn& on_match,
                       core::RangeExecutor* executor) const {
    if (needle.find('\0') != std::string_view::npos) return;
    std::string folded_needle(needle);
    if (ignore_case) fold(folded_needle);
    // The lists hold folded trigrams: they are walked with the folded needle whatever the case
    // mode, and each candidate is checked against the bytes the mode compares.
    std::optional<NameTrigrams::Candidates> lists;
    if (trigrams_ && needle.size() >= 3) {
        std::string key(needle);
        fold(key);
        lists.emplace(*trigrams_, key);
    }
    NameTrigrams::Candidates* candidates = lists ? &*lists : nullptr;
    std::size_t pos = 0;
    if (layer_) {
        // Each layer directory where the fresh index would hold it: after every base directory
        // with a smaller or equal id (an equal one is masked).
        for (const auto& [id, dir] : layer_->dirs) {
            const std::size_t at = base_ ? base_->first_name_after_dir(id) : 0;
            if (!search_base(pos, at, folded_needle, ignore_case, on_match, executor, candidates)) {
                return;
            }
            pos = std::max(pos, at);
            const std::string& hay = ignore_case ? dir->folded : dir->names;
            for (std::size_t i = 0; i < dir->starts.size(); ++i) {
                const std::size_t begin = dir->starts[i];
                const std::size_t end =
                    i + 1 < dir->starts.size() ? dir->starts[i + 1] - 1 : hay.size() - 1;
                const std::string_view name(hay.data() + begin, end - begin);
                if (name.find(folded_needle) == std::string_view::npos) continue;
                const Key key{id, std::string_view(dir->names).substr(begin, end - begin),
                              dir->prefix, dir->types[i]};
                if (!on_match(key)) return;
            }
        }
    }
    (void)search_base(pos, base_size(), folded_needle, ignore_case, on_match, executor, candidates);
}

bool NameIndex::search_base(std::size_t begin, std::size_t end, std::string_view needle,
                            bool ignore_case, const MatchFn& on_match,
                            core::RangeExecutor* executor, NameTrigrams::Candidates* lists) const {
    if (!base_ || begin >= end) return true;
    const NameFile& base = *base_;
    const std::vector<bool>* masked = layer_ ? &layer_->masked : nullptr;
    if (lists != nullptr) {
        for (std::uint64_t i = lists->next(begin); i < end; i = lists->next(i + 1)) {
            const std::uint32_t d = base.dir_of(i);
            if (masked != nullptr && (*masked)[d]) continue;
            const std::string_view name = ignore_case ? base.folded_name(i) : base.name(i);
            if (name.find(needle) == std::string_view::npos) continue;
            if (!on_match(Key{base.dir_id(d), base.name(i), base.prefix(d), base.type(i)})) {
                return false;
            }
        }
        return true;
    }
    std::vector<std::vector<std::uint64_t>> hits;  // per block of the window
    std::size_t window_blocks = kFirstWindowBlocks;
    for (std::size_t at = begin; at < end;) {
        const std::size_t window_end = std::min(end, at + window_blocks * kBlock);
        const std::size_t blocks = (window_end - at + kBlock - 1) / kBlock;
        hits.resize(std::max(hits.size(), blocks));
        for (std::size_t b = 0; b < blocks; ++b) hits[b].clear();
        auto body = [&](std::size_t first, std::size_t last, unsigned) {
            for (std::size_t b = first; b < last; ++b) {
                const std::size_t from = at + b * kBlock;
                base.search(from, std::min(window_end, from + kBlock), needle, ignore_case,
                            &hits[b]);
            }
        };
        // One block, or no workers: no hand-off. A failed parallel call (from inside a worker of
        // the same executor) searches on this thread instead.
        if (executor == nullptr || executor->size() <= 1 || blocks == 1 ||
            !executor->parallel_for(blocks, body)) {
            for (std::size_t b = 0; b < blocks; ++b) hits[b].clear();
            body(0, blocks, 0);
        }
        for (std::size_t b = 0; b < blocks; ++b) {
            for (const std::uint64_t i : hits[b]) {
                const std::uint32_t d = base.dir_of(i);
                if (masked != nullptr && (*masked)[d]) continue;
                if (!on_match(Key{base.dir_id(d), base.name(i), base.prefix(d), base.type(i)})) {
                    return false;
                }
            }
        }
        at = window_end;
        window_blocks = std::min(kMaxWindowBlocks, window_blocks * 2);
    }
    return true;
}

}  // namespace wsindex::storage
