// Sorting and cursor rules of the browser (model.hpp).
#include "cli/ui/model.hpp"

#include <algorithm>
#include <tuple>

namespace wsindex::cli::ui {

void choose_sort_key(SortOrder& order, SortKey key) {
    if (order.key == key) {
        order.descending = !order.descending;
        return;
    }
    order.key = key;
    order.descending = key != SortKey::Name;
}

void sort_entries(std::vector<Entry>& entries, const SortOrder& order) {
    const auto value = [&](const Entry& e) -> std::int64_t {
        switch (order.key) {
            case SortKey::Size:
                return static_cast<std::int64_t>(e.bytes(order.apparent));
            case SortKey::Count:
                return static_cast<std::int64_t>(e.items());
            case SortKey::Mtime:
                return e.mtime_ns();
            case SortKey::Name:
                break;
        }
        return 0;
    };
    std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
        if (order.dirs_first && a.is_dir() != b.is_dir()) return a.is_dir();
        if (order.key != SortKey::Name) {
            const std::int64_t va = value(a);
            const std::int64_t vb = value(b);
            if (va != vb) return order.descending ? va > vb : va < vb;
            return a.name < b.name;
        }
        return order.descending ? a.name > b.name : a.name < b.name;
    });
}

void Listing::move(std::ptrdiff_t delta) {
    if (entries.empty()) {
        cursor = 0;
        return;
    }
    const auto last = static_cast<std::ptrdiff_t>(entries.size()) - 1;
    const auto next =
        std::clamp(static_cast<std::ptrdiff_t>(cursor) + delta, std::ptrdiff_t{0}, last);
    cursor = static_cast<std::size_t>(next);
}

void Listing::move_to(std::size_t index) {
    cursor = entries.empty() ? 0 : std::min(index, entries.size() - 1);
}

bool Listing::select(const std::string& name) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].name == name) {
            cursor = i;
            return true;
        }
    }
    return false;
}

void Listing::scroll_to_cursor(std::size_t rows) {
    if (rows == 0) rows = 1;
    if (cursor < top) top = cursor;
    if (cursor >= top + rows) top = cursor + 1 - rows;
    // After a resize or a shorter list: no empty rows below the last entry when it can be
    // avoided.
    if (entries.size() <= rows) {
        top = 0;
    } else if (top + rows > entries.size()) {
        top = entries.size() - rows;
    }
}

std::string base_name(const std::string& path) {
    if (path == "/") return path;
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parent_path(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return "/";
    return path.substr(0, slash);
}

namespace {

Entry entry_from(const ipc::DuEntry& row) {
    Entry e;
    e.path = row.path;
    e.name = base_name(row.path);
    // A daemon without DuParams::children sends directories only, without their columns.
    e.type = row.stat ? row.stat->type : 'd';
    e.size = row.size;
    e.disk = row.disk;
    e.files = row.files;
    e.dirs = row.dirs;
    e.partial = row.partial;
    e.stat = row.stat;
    return e;
}

}  // namespace

Listing listing_from_du(const std::string& path, const ipc::DuReply& reply,
                        const SortOrder& order) {
    Listing listing;
    listing.self.path = path;
    listing.self.name = base_name(path);
    listing.self.type = 'd';
    for (const ipc::DuEntry& row : reply.entries) {
        if (row.depth == 0) {
            listing.self = entry_from(row);
        } else if (row.depth == 1) {
            listing.entries.push_back(entry_from(row));
        }
    }
    sort_entries(listing.entries, order);
    return listing;
}

}  // namespace wsindex::cli::ui
