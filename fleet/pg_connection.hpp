// PgConnection: one libpq connection (RAII), with the few calls the fleet code needs, each
// returning core::Status with PostgreSQL's own message (the password never appears in it).
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace wsindex::fleet {

// A query result (RAII over PGresult).
using PgResult = std::unique_ptr<PGresult, decltype(&PQclear)>;

class PgConnection {
  public:
    PgConnection() = default;

    // Connects to `url` (a libpq URI or key=value string); `password`, if not empty, is passed
    // as the password parameter rather than put into the URL (it stays out of every message).
    static core::Status connect(const std::string& url, const std::string& password,
                                PgConnection* out);

    [[nodiscard]] bool is_open() const { return conn_ != nullptr; }
    [[nodiscard]] PGconn* handle() const { return conn_.get(); }

    // Runs statements without results (or whose results are ignored); a COPY left open by
    // a failure is ended as failed first.
    core::Status exec(const std::string& sql);
    // One statement with text parameters (nullptr: NULL); the rows in *out.
    core::Status query(const std::string& sql, const std::vector<const char*>& params,
                       PgResult* out);
    // The same with binary parameters where `binary[i]` (bytea values: lengths from `lengths`).
    core::Status query_bytes(const std::string& sql, const std::vector<std::string>& params,
                             const std::vector<bool>& binary, PgResult* out);

    // The same, the rows handed to `row` one at a time as they arrive (single-row mode:
    // memory stays flat whatever the size of the answer).
    core::Status query_rows(const std::string& sql, const std::vector<std::string>& params,
                            const std::vector<bool>& binary,
                            const std::function<void(const PGresult* result)>& row);

    // COPY ... FROM STDIN: `sql` is the COPY statement, then put() the text rows, then end().
    core::Status copy_begin(const std::string& sql);
    core::Status copy_put(std::string_view data);
    core::Status copy_end();

    // Asks the server to cancel the statement running on this connection (any thread).
    void cancel() const;

    std::string literal(std::string_view text) const;     // 'quoted' (PQescapeLiteral)
    std::string identifier(std::string_view text) const;  // "quoted" (PQescapeIdentifier)

  private:
    core::Status failure(std::string_view what) const;
    void abort_copy();  // ends a COPY still open, as failed

    bool copying_ = false;

    std::unique_ptr<PGconn, decltype(&PQfinish)> conn_{nullptr, &PQfinish};
};

// The first value of the first row, as text ("" when there is none or it is NULL).
std::string first_value(const PgResult& result);

// A binary-format int8 or int4 value (0 for NULL or any other length).
std::int64_t binary_integer(std::string_view value);

}  // namespace wsindex::fleet
