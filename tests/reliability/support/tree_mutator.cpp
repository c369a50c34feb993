// TreeMutator: seeded file-system changes through std::filesystem.
#include "tests/reliability/support/tree_mutator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace wsindex::reliability::test {

namespace fs = std::filesystem;

namespace {

void write_bytes(const fs::path& file, std::size_t n, std::ios::openmode mode) {
    std::ofstream out(file, std::ios::binary | mode);
    out << std::string(n, 'm');
    if (!out) ADD_FAILURE() << "write " << file;
}

// The regular files directly in `dir`, in name order (directory order is not reproducible).
std::vector<fs::path> files_in(const fs::path& dir) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.is_regular_file(ec)) files.push_back(e.path());
    }
    if (ec) ADD_FAILURE() << "list " << dir << ": " << ec.message();
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

TreeMutator::TreeMutator(const std::string& area) {
    std::error_code ec;
    dirs_.push_back(area);
    for (fs::recursive_directory_iterator it(area, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec) && !it->is_symlink(ec)) dirs_.push_back(it->path().string());
    }
    if (ec) ADD_FAILURE() << "list " << area << ": " << ec.message();
    std::sort(dirs_.begin(), dirs_.end());
}

void TreeMutator::mutate(std::mt19937_64& rng, std::size_t dirs) {
    ++round_;
    for (std::size_t i = 0; i < dirs; ++i) {
        const fs::path dir = dirs_[rng() % dirs_.size()];
        const std::string tag = std::to_string(round_) + "-" + std::to_string(i);
        const auto files = files_in(dir);
        // The first change of a round always creates an entry: the round cannot be a no-op.
        const auto kind = i == 0 ? 2 : rng() % 4;
        std::error_code ec;
        if (kind == 0 && !files.empty()) {
            write_bytes(files[rng() % files.size()], 1 + rng() % 4096, std::ios::app);
        } else if (kind == 1 && !files.empty()) {
            if (!fs::remove(files[rng() % files.size()], ec)) ADD_FAILURE() << ec.message();
        } else if (kind == 3) {
            const fs::path sub = dir / ("added-dir-" + tag);
            if (!fs::create_directory(sub, ec)) ADD_FAILURE() << sub << ": " << ec.message();
            for (int f = 0; f < 3; ++f) {
                write_bytes(sub / ("f" + std::to_string(f)), rng() % 2048, std::ios::trunc);
            }
        } else {
            write_bytes(dir / ("added-" + tag), rng() % 8192, std::ios::trunc);
        }
    }
}

}  // namespace wsindex::reliability::test
