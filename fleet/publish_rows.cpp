// The pieces shared by the full and the delta publish (fleet/publish_rows.hpp).
#include "fleet/publish_rows.hpp"

#include <system_error>

#include "fleet/copy_binary.hpp"
#include "fleet/copy_text.hpp"

namespace wsindex::fleet {

namespace {
constexpr std::size_t kCopyChunk = 1 << 20;
}  // namespace

core::Status read_roots(storage::Database& db, std::vector<Root>* roots) {
    storage::Statement s;
    if (auto st = db.prepare("SELECT prefix, depth FROM dirs WHERE parent = 0 AND id != 0", &s);
        !st) {
        return st;
    }
    for (bool row = true;;) {
        if (auto st = s.step(&row); !st) return st;
        if (!row) break;
        roots->push_back({std::string(s.column_bytes(0)), s.column_int64(1)});
    }
    return {};
}

const Root* root_of(const std::vector<Root>& roots, std::string_view prefix) {
    const Root* best = nullptr;
    for (const Root& r : roots) {
        if (prefix.substr(0, r.prefix.size()) == r.prefix &&
            (best == nullptr || r.prefix.size() > best->prefix.size())) {
            best = &r;
        }
    }
    return best;
}

std::string roots_literal(const std::vector<Root>& roots) {
    std::string out = "ARRAY[";
    for (std::size_t i = 0; i < roots.size(); ++i) {
        std::string path = roots[i].prefix;
        if (path.size() > 1) path.pop_back();
        std::string hex;
        CopyRow(&hex).bytes(path);  // "\\x..": COPY's doubled backslash
        out += (i ? ",'" : "'") + hex.substr(1) + "'::bytea";
    }
    return out + "]::bytea[]";
}

core::Status CopyStream::begin(const std::string& copy_sql) {
    buffer_.clear();
    buffer_.reserve(kCopyChunk + 4096);
    copy_binary_header(&buffer_);
    return conn_.copy_begin(copy_sql + " (FORMAT binary)");
}

core::Status CopyStream::row_done() {
    if (buffer_.size() < kCopyChunk) return {};
    auto st = conn_.copy_put(buffer_);
    buffer_.clear();
    return st;
}

core::Status CopyStream::end() {
    copy_binary_trailer(&buffer_);
    auto st = conn_.copy_put(buffer_);
    buffer_.clear();
    if (!st) return st;
    return conn_.copy_end();
}

void entry_row(std::string* out, std::string_view host, const storage::Statement& s) {
    // kEntryColumns: host text, dir_id bigint, path and name bytea, type text, ten bigints
    // (size .. nlink), errno integer.
    CopyBinaryRow row(out, 16);
    row.bytes(host).int8(s.column_int64(0)).bytes(s.column_bytes(1)).bytes(s.column_bytes(2));
    if (s.column_is_null(3)) {
        row.null();
    } else {
        row.bytes(s.column_bytes(3));
    }
    for (int c = 4; c <= 13; ++c) {
        if (s.column_is_null(c)) {
            row.null();
        } else {
            row.int8(s.column_int64(c));
        }
    }
    if (s.column_is_null(14)) {
        row.null();
    } else {
        row.int4(static_cast<std::int32_t>(s.column_int64(14)));
    }
}

LocalDir read_dir(const storage::Statement& s) {
    LocalDir d;
    d.id = s.column_int64(0);
    d.prefix.assign(s.column_bytes(1));
    if (!s.column_is_null(2)) d.digest = s.column_int64(2);
    d.size = s.column_int64(3);
    d.blocks = s.column_int64(4);
    d.files = s.column_int64(5);
    d.dirs = s.column_int64(6);
    d.depth = s.column_int64(7);
    return d;
}

void dir_row(std::string* out, std::string_view host, const LocalDir& d, const Root& root) {
    // kDirColumns: host text, prefix and root bytea, rel_depth integer, size, blocks, files and
    // dirs bigint, depth integer, dir_id and digest bigint.
    CopyBinaryRow row(out, 11);
    row.bytes(host).bytes(d.prefix).bytes(root.prefix);
    row.int4(static_cast<std::int32_t>(d.depth - root.depth));
    row.int8(d.size).int8(d.blocks).int8(d.files).int8(d.dirs);
    row.int4(static_cast<std::int32_t>(d.depth));
    row.int8(d.id);
    if (d.digest) {
        row.int8(*d.digest);
    } else {
        row.null();
    }
}

core::Status lock_host(PgConnection& conn, const std::string& host) {
    return conn.exec("SELECT pg_advisory_xact_lock(hashtext('wsindex host ' || " +
                     conn.literal(host) + "))");
}

core::Status check_claim(PgConnection& conn, const std::string& host, const std::string& instance) {
    PgResult r{nullptr, &PQclear};
    if (auto st = conn.query("SELECT coalesce(instance, '') FROM hosts WHERE host = $1",
                             {host.c_str()}, &r);
        !st) {
        return st;
    }
    const std::string claimed = first_value(r);
    if (claimed.empty() || claimed == instance) return {};
    return core::Status(std::make_error_code(std::errc::address_in_use),
                        "the host name '" + host + "' is published by another wsindexd (" +
                            claimed + "; this one is " + instance +
                            "): give each daemon its own 'host' in [fleet], or, if that daemon "
                            "no longer publishes it, release the name with `wsctl fleet release " +
                            host + "`");
}

}  // namespace wsindex::fleet
