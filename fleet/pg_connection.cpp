// PgConnection: libpq calls mapped to core::Status.
#include "fleet/pg_connection.hpp"

#include <arpa/inet.h>

#include <cstring>
#include <system_error>

namespace wsindex::fleet {

namespace {

core::Status pg_error(std::string message) {
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
        message.pop_back();
    }
    return core::Status(std::make_error_code(std::errc::io_error), std::move(message));
}

PgResult wrap(PGresult* r) { return PgResult(r, &PQclear); }

core::Status check(PGconn* conn, const PgResult& r, std::string_view what) {
    const ExecStatusType s = PQresultStatus(r.get());
    if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || s == PGRES_COPY_IN) return {};
    const char* message = r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn);
    return pg_error(std::string(what) + ": " + message);
}

}  // namespace

core::Status PgConnection::connect(const std::string& url, const std::string& password,
                                   PgConnection* out) {
    // dbname may hold a whole connection string (expand_dbname); the password comes apart.
    // connect_timeout before dbname: a default the URL may override (libpq waits forever
    // for a host that drops packets otherwise).
    const char* keys[] = {"connect_timeout", "dbname", "password", "application_name", nullptr};
    const char* values[] = {"10", url.c_str(), password.empty() ? nullptr : password.c_str(),
                            "wsindex", nullptr};
    PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
    out->conn_.reset(conn);
    if (conn == nullptr) return pg_error("PostgreSQL: out of memory");
    if (PQstatus(conn) != CONNECTION_OK) {
        core::Status st =
            pg_error(std::string("connecting to PostgreSQL: ") + PQerrorMessage(conn));
        out->conn_.reset();
        return st;
    }
    // NOTICEs ("table ... does not exist, skipping") are not for the caller's stderr.
    PQsetNoticeProcessor(
        conn, [](void*, const char*) {}, nullptr);
    return {};
}

core::Status PgConnection::failure(std::string_view what) const {
    return pg_error(std::string(what) + ": " + PQerrorMessage(conn_.get()));
}

void PgConnection::abort_copy() {
    if (!copying_) return;
    copying_ = false;
    // A COPY left open by a failure (the local read failed halfway): the server fails it, and
    // the transaction then only takes ROLLBACK.
    (void)PQputCopyEnd(conn_.get(), "publish aborted");
    while (PGresult* raw = PQgetResult(conn_.get())) PQclear(raw);
}

core::Status PgConnection::exec(const std::string& sql) {
    abort_copy();
    PgResult r = wrap(PQexec(conn_.get(), sql.c_str()));
    return check(conn_.get(), r, "PostgreSQL");
}

core::Status PgConnection::query(const std::string& sql, const std::vector<const char*>& params,
                                 PgResult* out) {
    PgResult r = wrap(PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(params.size()),
                                   nullptr, params.data(), nullptr, nullptr, /*text*/ 0));
    auto st = check(conn_.get(), r, "PostgreSQL");
    *out = std::move(r);
    return st;
}

core::Status PgConnection::query_bytes(const std::string& sql,
                                       const std::vector<std::string>& params,
                                       const std::vector<bool>& binary, PgResult* out) {
    std::vector<const char*> values;
    std::vector<int> lengths;
    std::vector<int> formats;
    for (std::size_t i = 0; i < params.size(); ++i) {
        values.push_back(params[i].data());
        lengths.push_back(static_cast<int>(params[i].size()));
        formats.push_back(binary[i] ? 1 : 0);
    }
    PgResult r = wrap(PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(params.size()),
                                   nullptr, values.data(), lengths.data(), formats.data(),
                                   /*binary results*/ 1));
    auto st = check(conn_.get(), r, "PostgreSQL");
    *out = std::move(r);
    return st;
}

core::Status PgConnection::query_rows(const std::string& sql,
                                      const std::vector<std::string>& params,
                                      const std::vector<bool>& binary,
                                      const std::function<void(const PGresult* result)>& row) {
    abort_copy();
    std::vector<const char*> values;
    std::vector<int> lengths;
    std::vector<int> formats;
    for (std::size_t i = 0; i < params.size(); ++i) {
        values.push_back(params[i].data());
        lengths.push_back(static_cast<int>(params[i].size()));
        formats.push_back(binary[i] ? 1 : 0);
    }
    if (PQsendQueryParams(conn_.get(), sql.c_str(), static_cast<int>(params.size()), nullptr,
                          values.data(), lengths.data(), formats.data(), /*binary*/ 1) != 1) {
        return failure("PostgreSQL");
    }
    (void)PQsetSingleRowMode(conn_.get());
    core::Status st;
    while (PGresult* raw = PQgetResult(conn_.get())) {
        PgResult r = wrap(raw);
        if (!st) continue;  // drain what is left after an error
        if (PQresultStatus(raw) == PGRES_SINGLE_TUPLE) {
            row(raw);
        } else {
            st = check(conn_.get(), r, "PostgreSQL");
        }
    }
    return st;
}

core::Status PgConnection::copy_begin(const std::string& sql) {
    PgResult r = wrap(PQexec(conn_.get(), sql.c_str()));
    auto st = check(conn_.get(), r, "PostgreSQL COPY");
    copying_ = st.is_ok();
    return st;
}

core::Status PgConnection::copy_put(std::string_view data) {
    if (PQputCopyData(conn_.get(), data.data(), static_cast<int>(data.size())) != 1) {
        return failure("PostgreSQL COPY");
    }
    return {};
}

core::Status PgConnection::copy_end() {
    copying_ = false;
    if (PQputCopyEnd(conn_.get(), nullptr) != 1) return failure("PostgreSQL COPY");
    core::Status st;
    while (PGresult* raw = PQgetResult(conn_.get())) {
        PgResult r = wrap(raw);
        if (st) st = check(conn_.get(), r, "PostgreSQL COPY");
    }
    return st;
}

void PgConnection::cancel() const {
    if (!conn_) return;
    PGcancel* c = PQgetCancel(conn_.get());
    if (c == nullptr) return;
    char error[256];
    (void)PQcancel(c, error, sizeof error);
    PQfreeCancel(c);
}

std::string PgConnection::literal(std::string_view text) const {
    char* q = PQescapeLiteral(conn_.get(), text.data(), text.size());
    std::string out = q ? q : "NULL";
    PQfreemem(q);
    return out;
}

std::string PgConnection::identifier(std::string_view text) const {
    char* q = PQescapeIdentifier(conn_.get(), text.data(), text.size());
    std::string out = q ? q : "\"\"";
    PQfreemem(q);
    return out;
}

std::string first_value(const PgResult& result) {
    if (!result || PQntuples(result.get()) == 0 || PQgetisnull(result.get(), 0, 0)) return {};
    return std::string(PQgetvalue(result.get(), 0, 0),
                       static_cast<std::size_t>(PQgetlength(result.get(), 0, 0)));
}

std::int64_t binary_integer(std::string_view v) {
    if (v.size() == 8) {
        std::uint32_t hi = 0;
        std::uint32_t lo = 0;
        std::memcpy(&hi, v.data(), 4);
        std::memcpy(&lo, v.data() + 4, 4);
        return static_cast<std::int64_t>((std::uint64_t{ntohl(hi)} << 32) | ntohl(lo));
    }
    if (v.size() == 4) {
        std::uint32_t x = 0;
        std::memcpy(&x, v.data(), 4);
        return static_cast<std::int32_t>(ntohl(x));
    }
    return 0;
}

}  // namespace wsindex::fleet
