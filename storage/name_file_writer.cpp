// NameFile::build_file: the name image built straight into its file, in bounded memory.
//
// Why not build() then write(): build() holds every section in vectors and then copies them
// into the image, so its peak is twice the image in anonymous memory (8 GiB at 100M names, for
// an image that is then written out and mapped). Here each section streams, as the rows arrive,
// into an unlinked temporary file of its own (the image's sections are laid out by their
// counts, which are known only at the end); then the image is written front to back from
// them, the folded names made from the names on the way, the body hashed as it goes, and the
// header written last. Memory: one buffer per section. Disk: the image twice while it runs.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <array>
#include <cerrno>
#include <memory>
#include <string>

#include "core/unique_fd.hpp"
#include "storage/mapped_image.hpp"
#include "storage/name_file.hpp"
#include "storage/name_file_format.hpp"

namespace wsindex::storage {
namespace {

using namespace name_file_format;  // NOLINT(google-build-using-namespace): this file's format

constexpr std::size_t kBuffer = 1 << 20;

core::Status write_all(int fd, const char* p, std::size_t n, const std::string& what) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return errno_status("writing " + what);
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return {};
}

// One section's bytes, appended through a buffer to a temporary file that has no name (it
// is unlinked as soon as it is open: nothing is left behind by a crash), then read back once.
class Spill {
  public:
    core::Status open(const std::string& near) {
        std::string name = near + ".spill.XXXXXX";
        fd_.reset(::mkostemp(name.data(), O_CLOEXEC));
        if (!fd_.valid()) return errno_status("creating " + name);
        ::unlink(name.c_str());
        what_ = name;
        buffer_.reserve(kBuffer);
        return {};
    }
    core::Status append(std::string_view bytes) {
        size_ += bytes.size();
        if (buffer_.size() + bytes.size() > kBuffer) {
            if (auto s = flush(); !s) return s;
            if (bytes.size() > kBuffer)
                return write_all(fd_.get(), bytes.data(), bytes.size(), what_);
        }
        buffer_.append(bytes);
        return {};
    }
    template <typename T>
    core::Status put(T value) {
        return append({reinterpret_cast<const char*>(&value), sizeof value});
    }
    core::Status flush() {
        auto s = write_all(fd_.get(), buffer_.data(), buffer_.size(), what_);
        buffer_.clear();
        return s;
    }
    [[nodiscard]] std::uint64_t size() const { return size_; }
    // Each chunk of the section, in order, to `sink` (after a flush).
    template <typename Sink>
    core::Status replay(Sink&& sink) {
        std::string chunk(kBuffer, '\0');
        for (std::uint64_t at = 0; at < size_;) {
            const ssize_t n =
                ::pread(fd_.get(), chunk.data(), chunk.size(), static_cast<off_t>(at));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return errno_status("reading back " + what_);
            if (auto s = sink(std::string_view(chunk.data(), static_cast<std::size_t>(n))); !s) {
                return s;
            }
            at += static_cast<std::uint64_t>(n);
        }
        return {};
    }

  private:
    core::UniqueFd fd_;
    std::string what_;
    std::string buffer_;
    std::uint64_t size_ = 0;
};

// The image file written front to back through a buffer, every byte after the header hashed.
class ImageOut {
  public:
    ImageOut() : hash_(XXH3_createState(), &XXH3_freeState) {}
    core::Status open(const std::string& tmp) {
        what_ = tmp;
        fd_.reset(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        if (!fd_.valid()) return errno_status("creating " + tmp);
        if (hash_ == nullptr || XXH3_64bits_reset(hash_.get()) != XXH_OK) {
            return core::Status(std::make_error_code(std::errc::not_enough_memory), "XXH3 state");
        }
        buffer_.reserve(kBuffer);
        // The header's place: written last, when the body's checksum is known.
        offset_ = kHeaderSize;
        if (auto s = pwrite_header(std::string(kHeaderSize, '\0')); !s) return s;
        if (::lseek(fd_.get(), static_cast<off_t>(kHeaderSize), SEEK_SET) < 0) {
            return errno_status("seeking in " + tmp);
        }
        return {};
    }
    core::Status append(std::string_view bytes) {
        (void)XXH3_64bits_update(hash_.get(), bytes.data(), bytes.size());
        offset_ += bytes.size();
        if (buffer_.size() + bytes.size() > kBuffer) {
            if (auto s = flush(); !s) return s;
        }
        buffer_.append(bytes);
        return {};
    }
    // Zeros up to `at`, the next section's offset.
    core::Status pad_to(std::uint64_t at) {
        if (at < offset_)
            return core::Status(std::make_error_code(std::errc::invalid_argument),
                                "name file: a section overran its place");
        static constexpr std::array<char, 8> kZeros{};
        while (offset_ < at) {
            const std::uint64_t n = std::min<std::uint64_t>(at - offset_, kZeros.size());
            if (auto s = append({kZeros.data(), n}); !s) return s;
        }
        return {};
    }
    core::Status flush() {
        if (buffer_.empty()) return {};
        auto s = write_all(fd_.get(), buffer_.data(), buffer_.size(), what_);
        buffer_.clear();
        return s;
    }
    [[nodiscard]] std::uint64_t offset() const { return offset_; }
    [[nodiscard]] std::uint64_t body_checksum() const { return XXH3_64bits_digest(hash_.get()); }
    core::Status pwrite_header(const std::string& header) {
        if (::pwrite(fd_.get(), header.data(), header.size(), 0) !=
            static_cast<ssize_t>(header.size())) {
            return errno_status("writing the header of " + what_);
        }
        return {};
    }
    core::Status sync() {
        if (::fsync(fd_.get()) != 0) return errno_status("fsync " + what_);
        return {};
    }

  private:
    core::UniqueFd fd_;
    std::string what_;
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> hash_;
    std::string buffer_;
    std::uint64_t offset_ = 0;
};

// The sections in the order of the file (name_file_format::layout).
enum Section { kStarts, kDirIds, kDirStarts, kDirFirst, kDirOf, kTypes, kNames, kPrefixes, kCount };

core::Status build_into(Database& db, const DatabaseIdentity& identity, const std::string& path,
                        const std::string& tmp) {
    std::array<Spill, kCount> spill;
    for (Spill& s : spill) {
        if (auto st = s.open(path); !st) return st;
    }
    Header h;
    std::uint64_t dirs = 0;
    std::uint64_t names = 0;
    NameSink sink;
    sink.dir = [&](std::int64_t id, std::string_view prefix) -> core::Status {
        if (dirs == UINT32_MAX) return too_many_dirs();
        ++dirs;
        core::Status st = spill[kDirIds].put(id);
        if (st) st = spill[kDirStarts].put(spill[kPrefixes].size());
        if (st) st = spill[kDirFirst].put(names);
        if (st) st = spill[kPrefixes].append(prefix);
        return st;
    };
    sink.name = [&](std::string_view name, char type) -> core::Status {
        ++names;
        core::Status st = spill[kDirOf].put(static_cast<std::uint32_t>(dirs - 1));
        if (st) st = spill[kTypes].put(type);
        if (st) st = spill[kStarts].put(spill[kNames].size());
        if (st) st = spill[kNames].append(name);
        if (st) st = spill[kNames].put('\0');
        return st;
    };
    if (auto st = read_names(db, &h.generation, sink); !st) return st;
    // The closing entries of the offset tables (the same as build()'s).
    core::Status st = spill[kStarts].put(spill[kNames].size());
    if (st) st = spill[kDirStarts].put(spill[kPrefixes].size());
    if (st) st = spill[kDirFirst].put(names);
    for (Spill& s : spill) {
        if (st) st = s.flush();
    }
    if (!st) return st;

    h.version = NameFile::kFormatVersion;
    h.header_size = kHeaderSize;
    h.dev = identity.dev;
    h.ino = identity.ino;
    h.names = names;
    h.dirs = dirs;
    h.names_bytes = spill[kNames].size();
    h.prefix_bytes = spill[kPrefixes].size();
    Layout l{};
    if (!layout(h, &l))
        return core::Status(std::make_error_code(std::errc::value_too_large),
                            "name file: index too large");
    h.file_size = l.end;

    ImageOut out;
    if (auto s = out.open(tmp); !s) return s;
    const auto copy = [&](Section section, std::uint64_t at) -> core::Status {
        if (auto s = out.pad_to(at); !s) return s;
        return spill[section].replay([&](std::string_view chunk) { return out.append(chunk); });
    };
    const std::array<std::pair<Section, std::uint64_t>, 7> before_folded{
        {{kStarts, l.starts},
         {kDirIds, l.dir_ids},
         {kDirStarts, l.dir_starts},
         {kDirFirst, l.dir_first},
         {kDirOf, l.dir_of},
         {kTypes, l.types},
         {kNames, l.names}}};
    for (const auto& [section, at] : before_folded) {
        if (auto s = copy(section, at); !s) return s;
    }
    // The folded copy: the names again, ASCII A-Z as a-z.
    if (auto s = out.pad_to(l.folded); !s) return s;
    std::string folded;
    if (auto s = spill[kNames].replay([&](std::string_view chunk) {
            folded.assign(chunk);
            for (char& c : folded) {
                if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            }
            return out.append(folded);
        });
        !s) {
        return s;
    }
    if (auto s = copy(kPrefixes, l.prefixes); !s) return s;
    if (auto s = out.pad_to(l.end); !s) return s;
    if (auto s = out.flush(); !s) return s;
    std::string header(kHeaderSize, '\0');
    put_header(header.data(), h, out.body_checksum());
    if (auto s = out.pwrite_header(header); !s) return s;
    return out.sync();
}

}  // namespace

core::Status NameFile::build_file(Database& db, const DatabaseIdentity& identity,
                                  const std::string& path) {
    const std::string tmp = path + ".tmp";
    core::Status st = build_into(db, identity, path, tmp);
    if (st && ::rename(tmp.c_str(), path.c_str()) != 0) st = errno_status("renaming " + tmp);
    if (!st) {
        ::unlink(tmp.c_str());
        return st;
    }
    fsync_parent_dir(path);  // the rename is durable once the directory is
    return {};
}

}  // namespace wsindex::storage
