// The name index file format written section by section from a NameSet, streamed (the image is
// never held twice), then opened with the product's loader.
#include "name_file_image.hpp"

#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <vector>

#include "storage/mapped_image.hpp"

namespace wsindex::bench {
namespace {

constexpr std::size_t kHeaderSize = 128;
constexpr std::size_t kBodyChecksumAt = 80;  // XXH3-64 of every byte after the header
constexpr std::size_t kChecksumAt = 120;

using storage::align8;
using storage::fnv1a;

// Writes sequentially; every byte after the header goes into the body checksum.
class Writer {
  public:
    explicit Writer(std::FILE* f) : f_(f), body_(XXH3_createState()) { XXH3_64bits_reset(body_); }
    ~Writer() { XXH3_freeState(body_); }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    void bytes(const void* p, std::size_t n) {
        if (n > 0 && std::fwrite(p, 1, n, f_) != n) ok_ = false;
        if (at_ >= kHeaderSize) XXH3_64bits_update(body_, p, n);
        at_ += n;
    }
    [[nodiscard]] std::uint64_t body_checksum() const { return XXH3_64bits_digest(body_); }
    template <typename T>
    void value(T v) {
        bytes(&v, sizeof v);
    }
    void pad8() {
        static constexpr char kZeros[8] = {};
        bytes(kZeros, align8(at_) - at_);
    }
    [[nodiscard]] bool ok() const { return ok_; }
    [[nodiscard]] std::uint64_t at() const { return at_; }

  private:
    std::FILE* f_;
    XXH3_state_t* body_;
    std::uint64_t at_ = 0;
    bool ok_ = true;
};

std::string prefix_of(std::size_t d) { return "/bench/d" + std::to_string(d) + "/"; }

core::Status errno_status(const std::string& what) {
    return core::Status(std::error_code(errno, std::generic_category()), what);
}

}  // namespace

core::Status write_and_open_name_file(const NameSet& names, std::size_t names_per_dir,
                                      const std::string& path,
                                      std::shared_ptr<const storage::NameFile>* out) {
    const std::uint64_t n = names.size();
    const std::uint64_t dirs = (n + names_per_dir - 1) / names_per_dir;
    std::uint64_t prefix_bytes = 0;
    for (std::uint64_t d = 0; d < dirs; ++d) prefix_bytes += prefix_of(d).size();
    const std::uint64_t names_bytes = names.bytes.size();
    const std::uint64_t types_at =
        align8(kHeaderSize + (n + 1) * 8 + dirs * 8 + (dirs + 1) * 16 + n * 4);
    const std::uint64_t names_at = align8(types_at + n);
    const std::uint64_t folded_at = align8(names_at + names_bytes);
    const std::uint64_t prefixes_at = align8(folded_at + names_bytes);
    const std::uint64_t file_size = align8(prefixes_at + prefix_bytes);

    char header[kHeaderSize] = {};
    auto put = [&](std::size_t at, auto v) { std::memcpy(header + at, &v, sizeof v); };
    std::memcpy(header, "WSNAMES", 8);
    put(8, storage::NameFile::kFormatVersion);
    put(12, static_cast<std::uint32_t>(kHeaderSize));
    put(16, std::int64_t{1});  // generation
    put(24, std::uint64_t{0});
    put(32, std::uint64_t{0});
    put(40, n);
    put(48, dirs);
    put(56, names_bytes);
    put(64, prefix_bytes);
    put(72, file_size);
    put(kChecksumAt, fnv1a(header, kChecksumAt));

    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return errno_status("creating " + path);
    std::vector<char> buffer(1 << 20);
    std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
    Writer w(f);
    w.bytes(header, kHeaderSize);
    w.bytes(names.starts.data(), names.starts.size() * 8);
    for (std::uint64_t d = 0; d < dirs; ++d) w.value(static_cast<std::int64_t>(d + 1));
    std::uint64_t prefix_at = 0;
    for (std::uint64_t d = 0; d <= dirs; ++d) {
        w.value(prefix_at);
        if (d < dirs) prefix_at += prefix_of(d).size();
    }
    for (std::uint64_t d = 0; d <= dirs; ++d) w.value(std::min(n, d * names_per_dir));
    for (std::uint64_t i = 0; i < n; ++i) w.value(static_cast<std::uint32_t>(i / names_per_dir));
    w.pad8();
    const std::vector<char> types(1 << 16, 'f');
    for (std::uint64_t i = 0; i < n; i += types.size()) {
        w.bytes(types.data(), std::min<std::uint64_t>(types.size(), n - i));
    }
    w.pad8();
    w.bytes(names.bytes.data(), names_bytes);
    w.pad8();
    std::string folded;
    for (std::uint64_t i = 0; i < names_bytes; i += 1 << 20) {
        folded.assign(names.bytes, i, 1 << 20);
        for (char& c : folded) {
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
        w.bytes(folded.data(), folded.size());
    }
    w.pad8();
    for (std::uint64_t d = 0; d < dirs; ++d) {
        const std::string p = prefix_of(d);
        w.bytes(p.data(), p.size());
    }
    w.pad8();
    // The header again, with the body's checksum (and so a new header checksum).
    put(kBodyChecksumAt, w.body_checksum());
    put(kChecksumAt, fnv1a(header, kChecksumAt));
    const bool written = w.ok() && w.at() == file_size && std::fseek(f, 0, SEEK_SET) == 0 &&
                         std::fwrite(header, 1, kHeaderSize, f) == kHeaderSize;
    if (std::fclose(f) != 0 || !written) {
        ::unlink(path.c_str());
        return errno_status("writing " + path);
    }
    const core::Status s = storage::NameFile::open(path, storage::DatabaseIdentity{0, 0}, out);
    ::unlink(path.c_str());
    return s;
}

}  // namespace wsindex::bench
