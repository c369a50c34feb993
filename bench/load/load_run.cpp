// The load generator's engine (see load_run.hpp).
#include "bench/load/load_run.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "ipc/bytes_codec.hpp"
#include "ipc/client.hpp"
#include "ipc/methods.hpp"

namespace wsindex::bench {

namespace {

using Clock = std::chrono::steady_clock;

enum class Kind { find, du, status };

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

nlohmann::json kind_json(const KindStats& s) {
    const double max = s.latencies_ms.empty()
                           ? 0
                           : *std::max_element(s.latencies_ms.begin(), s.latencies_ms.end());
    auto round3 = [](double x) {
        return static_cast<double>(static_cast<long long>(x * 1000)) / 1000;
    };
    return {{"n", s.count},
            {"errors", s.errors},
            {"p50_ms", round3(percentile(s.latencies_ms, 0.50))},
            {"p90_ms", round3(percentile(s.latencies_ms, 0.90))},
            {"p99_ms", round3(percentile(s.latencies_ms, 0.99))},
            {"max_ms", round3(max)}};
}

// Checks one answer; "" when right, else what is wrong.
std::string check_find(const nlohmann::json& reply, const Probe& probe) {
    const auto it = reply.find("entries");
    if (it == reply.end() || !it->is_array()) return "find: no entries array";
    if (it->size() != 1) {
        return "find " + probe.name + ": " + std::to_string(it->size()) + " entries, expected 1";
    }
    auto path = ipc::decode_bytes((*it)[0].value("path", nlohmann::json()), "path");
    if (!path.ok()) return "find: bad path field";
    if (path.value() != probe.path) return "find " + probe.name + ": got " + path.value();
    return {};
}

std::string check_du(const nlohmann::json& reply, const Truth& truth) {
    const auto it = reply.find("entries");
    if (it == reply.end() || !it->is_array() || it->empty()) return "du: no entries";
    const auto& first = (*it)[0];
    auto path = ipc::decode_bytes(first.value("path", nlohmann::json()), "path");
    if (!path.ok() || path.value() != truth.du_root) return "du: first entry is not the root";
    const auto size = first.value("size", std::uint64_t{0});
    if (size != truth.du_size) {
        return "du: size " + std::to_string(size) + ", expected " + std::to_string(truth.du_size);
    }
    return {};
}

std::string check_status(const nlohmann::json& reply) {
    if (!reply.is_object() || !reply.contains("pid") || !reply.contains("server_version") ||
        !reply.contains("roots") || !reply["roots"].is_array()) {
        return "status: missing fields: " + reply.dump().substr(0, 200);
    }
    const auto& running = reply.value("running", nlohmann::json());
    if (!running.is_null() && !(running.is_object() && running.contains("root"))) {
        return "status: bad running field";
    }
    return {};
}

struct ClientResult {
    KindStats find, du, status;
    std::size_t connect_errors = 0;
    std::vector<std::string> errors;
};

void run_client(const LoadSpec& spec, int index, ClientResult& out) {
    std::mt19937_64 rng(spec.seed * 1000003 + static_cast<std::uint64_t>(index));
    ipc::ClientOptions options;
    options.reply_timeout = spec.reply_timeout;
    std::optional<ipc::Client> client;
    auto note = [&](std::string e) {
        if (out.errors.size() < 5) out.errors.push_back(std::move(e));
    };
    for (int q = 0; q < spec.queries; ++q) {
        // 50% find, 25% du, 25% status.
        const auto roll = rng() % 4;
        const Kind kind = roll < 2 ? Kind::find : roll == 2 ? Kind::du : Kind::status;
        KindStats& stats = kind == Kind::find ? out.find : kind == Kind::du ? out.du : out.status;
        const auto t0 = Clock::now();
        if (!client || !client->connected()) {
            auto c = ipc::Client::connect(spec.socket, options);
            if (!c) {
                ++out.connect_errors;
                ++stats.count;
                ++stats.errors;
                stats.latencies_ms.push_back(
                    std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
                note("connect: " + c.error().to_string());
                continue;
            }
            client.emplace(std::move(c.value()));
        }
        std::string problem;
        if (kind == Kind::find) {
            const Probe& probe = spec.truth.probes[rng() % spec.truth.probes.size()];
            auto reply = client->call(ipc::method::kFind,
                                      {{"pattern", ipc::encode_bytes(probe.name)}, {"limit", 10}});
            problem =
                reply ? check_find(reply.value(), probe) : "find: " + reply.error().to_string();
        } else if (kind == Kind::du) {
            auto reply =
                client->call(ipc::method::kDu, {{"path", ipc::encode_bytes(spec.truth.du_root)}});
            problem =
                reply ? check_du(reply.value(), spec.truth) : "du: " + reply.error().to_string();
        } else {
            auto reply = client->call(ipc::method::kStatus, nlohmann::json::object());
            problem = reply ? check_status(reply.value()) : "status: " + reply.error().to_string();
        }
        stats.latencies_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        ++stats.count;
        if (!problem.empty()) {
            ++stats.errors;
            note(std::move(problem));
        }
    }
}

void merge(KindStats& into, KindStats& from) {
    into.count += from.count;
    into.errors += from.errors;
    into.latencies_ms.insert(into.latencies_ms.end(), from.latencies_ms.begin(),
                             from.latencies_ms.end());
}

std::string probe_name(const std::string& token, int i) {
    char digits[16];
    std::snprintf(digits, sizeof digits, "%06d", i);
    return "wsload-" + token + "-" + digits + ".probe";
}

// nftw has no user pointer: the walk state lives here, used by one walk at a time.
std::mutex g_walk_mutex;
Truth* g_walk_truth = nullptr;
std::set<std::pair<dev_t, ino_t>>* g_walk_seen = nullptr;

int visit(const char* path, const struct stat* st, int type, struct FTW* /*ftw*/) {
    if (type == FTW_NS || type == FTW_DNR) return 1;
    if (g_walk_seen->insert({st->st_dev, st->st_ino}).second) {
        g_walk_truth->du_size += static_cast<std::uint64_t>(st->st_size);
    }
    if (type == FTW_F && S_ISREG(st->st_mode)) {
        const char* slash = std::strrchr(path, '/');
        g_walk_truth->probes.push_back({slash ? slash + 1 : path, path});
    }
    return 0;
}

}  // namespace

nlohmann::json LoadReport::to_json(const LoadSpec& spec) const {
    return {{"clients", spec.clients},
            {"queries_per_client", spec.queries},
            {"seed", spec.seed},
            {"errors", errors()},
            {"connect_errors", connect_errors},
            {"wall_s", static_cast<double>(static_cast<long long>(wall_seconds * 1000)) / 1000},
            {"find", kind_json(find)},
            {"du", kind_json(du)},
            {"status", kind_json(status)},
            {"error_samples", error_samples}};
}

std::string make_probe_tree(const std::string& dir, int files, const std::string& token) {
    if (::mkdir(dir.c_str(), 0755) != 0) return "mkdir " + dir + ": " + std::strerror(errno);
    std::string sub;
    for (int i = 0; i < files; ++i) {
        if (i % 100 == 0) {
            sub = dir + "/d" + std::to_string(i / 100);
            if (::mkdir(sub.c_str(), 0755) != 0)
                return "mkdir " + sub + ": " + std::strerror(errno);
        }
        const std::string path = sub + "/" + probe_name(token, i);
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) return "create " + path + ": " + std::strerror(errno);
        const std::string content(static_cast<std::size_t>((i * 37) % 1000), 'p');
        const bool ok =
            ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
        ::close(fd);
        if (!ok) return "write " + path;
    }
    return {};
}

Truth read_probe_tree(const std::string& dir, std::string& error) {
    Truth truth;
    truth.du_root = dir;
    std::set<std::pair<dev_t, ino_t>> seen;
    std::lock_guard lock(g_walk_mutex);
    g_walk_truth = &truth;
    g_walk_seen = &seen;
    const int rc = ::nftw(dir.c_str(), visit, 64, FTW_PHYS);
    g_walk_truth = nullptr;
    g_walk_seen = nullptr;
    if (rc != 0) error = "walking " + dir + " failed";
    if (truth.probes.empty()) error = "no files below " + dir;
    return truth;
}

LoadReport run_load(const LoadSpec& spec) {
    std::vector<ClientResult> results(static_cast<std::size_t>(spec.clients));
    const auto t0 = Clock::now();
    {
        std::vector<std::jthread> threads;
        threads.reserve(results.size());
        for (int i = 0; i < spec.clients; ++i) {
            threads.emplace_back([&spec, &results, i] {
                run_client(spec, i, results[static_cast<std::size_t>(i)]);
            });
        }
    }
    LoadReport report;
    report.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    for (auto& r : results) {
        merge(report.find, r.find);
        merge(report.du, r.du);
        merge(report.status, r.status);
        report.connect_errors += r.connect_errors;
        for (auto& e : r.errors) {
            if (report.error_samples.size() < 10) report.error_samples.push_back(std::move(e));
        }
    }
    return report;
}

}  // namespace wsindex::bench
