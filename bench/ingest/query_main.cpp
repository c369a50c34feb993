// wsbench-query: substring queries over an index — the in-memory name index (every column,
// and paths only), the SQL scan fallback, and (with --fts-db) an FTS5 trigram table built from the
// same names — plus the cost of POSIX regexec against std::regex over every name. One JSON line per
// measurement.
//
//   wsbench-query --db FILE [--fts-db SCRATCH.db] [--repeat N] [--regex RE] FRAGMENT...
#include <regex.h>
#include <sys/stat.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "storage/database.hpp"
#include "storage/name_index.hpp"
#include "storage/queries.hpp"

namespace {

using wsindex::core::Status;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// CPU time of the last median_ms() (median too): on a shared, busy machine the wall time
// includes waiting for a core, the CPU time does not.
double g_last_cpu_ms = 0;

template <typename F>
double median_ms(int repeat, F&& f) {
    std::vector<double> t;
    std::vector<double> cpu;
    for (int i = 0; i < repeat; ++i) {
        const double c0 = thread_cpu_ms();
        const auto t0 = Clock::now();
        f();
        t.push_back(ms_since(t0));
        cpu.push_back(thread_cpu_ms() - c0);
    }
    std::sort(t.begin(), t.end());
    std::sort(cpu.begin(), cpu.end());
    g_last_cpu_ms = cpu[cpu.size() / 2];
    return t[t.size() / 2];
}

void die(const Status& s) {
    std::fprintf(stderr, "wsbench-query: %s\n", s.to_string().c_str());
    std::exit(1);
}

long long file_size(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Measure substring and regex queries over a wsindex database"};
    std::string db_path;
    std::string fts_path;
    std::string regex = "^fi.*[0-9]$";
    int repeat = 5;
    std::vector<std::string> fragments;
    app.add_option("--db", db_path, "index database")->required();
    app.add_option("--fts-db", fts_path, "scratch database for an FTS5 trigram comparison");
    app.add_option("--repeat", repeat, "runs per measurement (median reported)");
    app.add_option("--regex", regex, "regex for the regcomp vs std::regex comparison");
    bool skip_sql = false;
    app.add_flag("--skip-sql", skip_sql, "no SQL scan comparison (to profile the index path)");
    app.add_option("FRAGMENT", fragments, "substrings to look for")->required();
    CLI11_PARSE(app, argc, argv);

    using namespace wsindex::storage;
    Database db;
    if (Status s = Database::open(db_path, OpenMode::read_only, &db); !s) die(s);
    NameIndex index;
    auto t0 = Clock::now();
    double c0 = thread_cpu_ms();
    if (Status s = NameIndex::load(db, &index); !s) die(s);
    std::printf(
        "{\"measure\":\"name_index_load\",\"names\":%zu,\"ms\":%.1f,\"cpu_ms\":%.1f,"
        "\"memory_bytes\":%zu}\n",
        index.size(), ms_since(t0), thread_cpu_ms() - c0, index.memory_bytes());

    Queries with_index(db, &index);
    Queries without_index(db);
    for (const std::string& fragment : fragments) {
        for (bool icase : {false, true}) {
            FindQuery q;
            q.pattern = fragment;
            q.ignore_case = icase;
            q.limit = 0;
            std::vector<FileRow> rows;
            std::size_t found = 0;
            Status st;
            const double indexed = median_ms(repeat, [&] {
                st = with_index.find(q, &rows);
                found = rows.size();
            });
            if (!st) die(st);
            const double indexed_cpu = g_last_cpu_ms;
            const bool used = with_index.last_used_index();
            // Paths only (wsctl's plain output): the name index answers without SQLite.
            FindQuery paths_query = q;
            paths_query.metadata = false;
            std::size_t paths_found = 0;
            const double paths = median_ms(repeat, [&] {
                st = with_index.find(paths_query, &rows);
                paths_found = rows.size();
            });
            if (!st) die(st);
            const double paths_cpu = g_last_cpu_ms;
            // The search alone: the matching keys from the name index, no row read.
            std::size_t keys = 0;
            const double searched = median_ms(repeat, [&] {
                keys = 0;
                index.for_each_substring(fragment, icase, [&](const NameIndex::Key&) {
                    ++keys;
                    return true;
                });
            });
            std::size_t scanned_found = 0;
            double scanned = 0;
            double scanned_cpu = 0;
            if (!skip_sql) {
                scanned = median_ms(std::max(1, repeat / 2), [&] {
                    st = without_index.find(q, &rows);
                    scanned_found = rows.size();
                });
                scanned_cpu = g_last_cpu_ms;
            }
            if (!st) die(st);
            std::printf(
                "{\"measure\":\"substring\",\"fragment\":\"%s\",\"ignore_case\":%s,"
                "\"matches\":%zu,\"search_ms\":%.2f,\"search_keys\":%zu,"
                "\"index_ms\":%.2f,\"index_cpu_ms\":%.2f,\"used_index\":%s,"
                "\"paths_ms\":%.2f,\"paths_cpu_ms\":%.2f,\"paths_matches\":%zu,"
                "\"sql_scan_ms\":%.1f,\"sql_scan_cpu_ms\":%.1f,\"sql_matches\":%zu}\n",
                fragment.c_str(), icase ? "true" : "false", found, searched, keys, indexed,
                indexed_cpu, used ? "true" : "false", paths, paths_cpu, paths_found, scanned,
                scanned_cpu, scanned_found);
        }
    }

    // POSIX regexec vs std::regex over every name, in memory (no SQLite in the loop).
    {
        std::vector<std::string> names;
        index.for_each_substring("", false, [&](const NameIndex::Key& k) {
            names.emplace_back(k.name);
            return true;
        });
        regex_t re;
        if (regcomp(&re, regex.c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
            std::fprintf(stderr, "bad regex\n");
            return 1;
        }
        std::size_t posix_hits = 0;
        median_ms(3, [&] {
            posix_hits = 0;
            for (const auto& n : names) posix_hits += regexec(&re, n.c_str(), 0, nullptr, 0) == 0;
        });
        const double posix_ms = g_last_cpu_ms;
        regfree(&re);
        const std::regex cxx(regex, std::regex::extended | std::regex::nosubs);
        std::size_t cxx_hits = 0;
        median_ms(3, [&] {
            cxx_hits = 0;
            for (const auto& n : names) cxx_hits += std::regex_search(n, cxx);
        });
        const double cxx_ms = g_last_cpu_ms;
        FindQuery q;
        q.pattern = regex;
        q.match = NameMatch::regex;
        q.limit = 0;
        std::vector<FileRow> rows;
        Status st;
        median_ms(3, [&] { st = without_index.find(q, &rows); });
        const double sql_ms = g_last_cpu_ms;
        if (!st) die(st);
        std::printf(
            "{\"measure\":\"regex\",\"regex\":\"%s\",\"names\":%zu,\"regcomp_cpu_ms\":%.1f,"
            "\"regcomp_matches\":%zu,\"std_regex_cpu_ms\":%.1f,\"std_regex_matches\":%zu,"
            "\"sql_regexp_cpu_ms\":%.1f,\"sql_matches\":%zu}\n",
            regex.c_str(), names.size(), posix_ms, posix_hits, cxx_ms, cxx_hits, sql_ms,
            rows.size());
    }

    if (!fts_path.empty()) {
        std::remove(fts_path.c_str());
        Database fts;
        if (Status s = Database::open(fts_path, OpenMode::read_write, &fts); !s) die(s);
        if (Status s = fts.exec("CREATE VIRTUAL TABLE names USING fts5(name,"
                                " tokenize='trigram')");
            !s) {
            die(s);
        }
        Statement insert;
        if (Status s = fts.prepare("INSERT INTO names(rowid, name) VALUES (?, ?)", &insert); !s) {
            die(s);
        }
        const long long before = file_size(fts_path);
        t0 = Clock::now();
        c0 = thread_cpu_ms();
        (void)fts.exec("BEGIN");
        std::int64_t rowid = 0;
        Status st;
        index.for_each_substring("", false, [&](const NameIndex::Key& k) {
            insert.bind_int64(1, ++rowid).bind_text(2, k.name);
            st = insert.run();
            return st.is_ok();
        });
        if (!st) die(st);
        (void)fts.exec("COMMIT");
        const double build_ms = ms_since(t0);
        const double build_cpu_ms = thread_cpu_ms() - c0;
        (void)fts.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        const long long bytes = file_size(fts_path) - before;
        std::printf(
            "{\"measure\":\"fts5_build\",\"names\":%lld,\"ms\":%.0f,\"cpu_ms\":%.0f,"
            "\"bytes\":%lld,\"bytes_per_name\":%.1f}\n",
            static_cast<long long>(rowid), build_ms, build_cpu_ms, bytes,
            rowid ? static_cast<double>(bytes) / static_cast<double>(rowid) : 0.0);
        // ESCAPE makes '_' and '%' literal, as in our substring search — but FTS5 then does
        // not use the trigram index (a full scan), so it is only used when needed.
        Statement match;
        Statement match_escaped;
        if (Status s = fts.prepare("SELECT count(*) FROM names WHERE name LIKE ?", &match); !s) {
            die(s);
        }
        if (Status s = fts.prepare("SELECT count(*) FROM names WHERE name LIKE ? ESCAPE '\\'",
                                   &match_escaped);
            !s) {
            die(s);
        }
        for (const std::string& fragment : fragments) {
            std::int64_t n = 0;
            const bool special = fragment.find_first_of("%_\\") != std::string::npos;
            Statement& stmt = special ? match_escaped : match;
            const double ms = median_ms(repeat, [&] {
                std::string escaped;
                for (char ch : fragment) {
                    if (ch == '%' || ch == '_' || ch == '\\') escaped.push_back('\\');
                    escaped.push_back(ch);
                }
                stmt.bind_text(1, "%" + escaped + "%");
                bool row = false;
                st = stmt.step(&row);
                n = stmt.column_int64(0);
                stmt.reset();
            });
            if (!st) die(st);
            std::printf(
                "{\"measure\":\"fts5_like\",\"fragment\":\"%s\",\"matches\":%lld,"
                "\"ms\":%.2f,\"cpu_ms\":%.2f,\"escaped\":%s}\n",
                fragment.c_str(), static_cast<long long>(n), ms, g_last_cpu_ms,
                special ? "true" : "false");
        }
    }
    return 0;
}
