// REGEXP implementation over POSIX regcomp/regexec, compiled once per statement via auxdata.
//
// Why regcomp and not std::regex: bench/ingest/wsbench-regex measured both over the same names;
// see docs/schema.md. regcomp also works on bytes in the C locale, so invalid UTF-8 is fine.
#include "storage/regexp.hpp"

#include <regex.h>
#include <sqlite3.h>

#include <cstring>
#include <memory>
#include <string>

#include "storage/regex_guard.hpp"
#include "storage/sqlite_error.hpp"

namespace wsindex::storage {
namespace {

struct Compiled {
    regex_t re{};
    ~Compiled() { regfree(&re); }
};

void destroy_compiled(void* p) { delete static_cast<Compiled*>(p); }

void regexp_function(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
    if (argc != 2) return;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) {
        sqlite3_result_null(ctx);
        return;
    }
    auto* compiled = static_cast<Compiled*>(sqlite3_get_auxdata(ctx, 0));
    if (compiled == nullptr) {
        const bool icase = sqlite3_user_data(ctx) != nullptr;
        const auto* pattern = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
        // Callers check first (the daemon answers InvalidParameter); this keeps every other
        // caller of REGEXP from handing regcomp a pattern that eats the machine.
        if (auto why = regex_refusal(pattern ? pattern : "")) {
            const std::string text = "regular expression refused: it " + *why;
            sqlite3_result_error(ctx, text.c_str(), -1);
            return;
        }
        auto fresh = std::make_unique<Compiled>();
        const int rc = regcomp(&fresh->re, pattern ? pattern : "",
                               REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
        if (rc != 0) {
            char message[256];
            regerror(rc, &fresh->re, message, sizeof message);
            std::string text = std::string("bad regular expression: ") + message;
            sqlite3_result_error(ctx, text.c_str(), -1);
            return;  // regcomp failed: nothing to regfree, but regfree on it is also harmless
        }
        compiled = fresh.release();
        // SQLite owns it from here; it may destroy it at once, so re-read it.
        sqlite3_set_auxdata(ctx, 0, compiled, destroy_compiled);
        compiled = static_cast<Compiled*>(sqlite3_get_auxdata(ctx, 0));
        if (compiled == nullptr) {
            sqlite3_result_error_nomem(ctx);
            return;
        }
    }
    // regexec needs a NUL-terminated string; names hold no NUL, so a copy is exact.
    thread_local std::string subject;
    const void* bytes = sqlite3_value_blob(argv[1]);
    const int size = sqlite3_value_bytes(argv[1]);
    subject.assign(static_cast<const char*>(bytes ? bytes : ""), static_cast<std::size_t>(size));
    sqlite3_result_int(ctx, regexec(&compiled->re, subject.c_str(), 0, nullptr, 0) == 0);
}

}  // namespace

core::Status register_regexp(sqlite3* db) {
    static int icase_marker = 1;  // non-null user data selects REG_ICASE
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc =
        sqlite3_create_function(db, "regexp", 2, flags, nullptr, regexp_function, nullptr, nullptr);
    if (rc == SQLITE_OK) {
        rc = sqlite3_create_function(db, "iregexp", 2, flags, &icase_marker, regexp_function,
                                     nullptr, nullptr);
    }
    if (rc != SQLITE_OK) return sqlite_status(db, rc, "registering REGEXP");
    return {};
}

}  // namespace wsindex::storage
