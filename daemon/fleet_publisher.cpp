// FleetPublisher: one thread, a PostgreSQL connection per publish (the password file read for
// each), a publish (a delta, or in full) whenever the index changed since the last one.
#include "daemon/fleet_publisher.hpp"

#include <limits.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>

#include "daemon/thread_priority.hpp"
#include "fleet/pg_connection.hpp"
#include "fleet/publisher.hpp"
#include "fleet/schema.hpp"
#include "storage/database.hpp"
#include "storage/index_version.hpp"

namespace wsindex::daemon {

namespace {

constexpr int kPublisherNice = 19;

std::int64_t wall_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

core::Status local_version(const std::string& db_path, LocalIndexVersion* out) {
    struct stat st {};
    if (::stat(db_path.c_str(), &st) == 0) {
        out->dev = st.st_dev;
        out->ino = st.st_ino;
    }
    storage::Database db;
    if (auto s = storage::Database::open(db_path, storage::OpenMode::read_only, &db); !s) {
        return s;
    }
    return storage::read_index_version(db, &out->generation, &out->revision);
}

// The password: the first line of `path` (none when `path` is empty). Read before each
// connection, so that a rotated password is used without a restart.
core::Status read_password(const std::string& path, std::string* password) {
    password->clear();
    if (path.empty()) return {};
    std::ifstream in(path);
    if (!in) {
        const int error = errno;
        return core::Status(std::error_code(error, std::generic_category()),
                            "cannot read the password file " + path + ": " +
                                std::generic_category().message(error));
    }
    std::getline(in, *password);
    return {};
}

}  // namespace

std::string default_fleet_host() {
    char name[HOST_NAME_MAX + 1] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
    return name;
}

FleetPublisher::FleetPublisher(FleetConfig config, std::string db_path)
    : config_(std::move(config)),
      db_path_(std::move(db_path)),
      instance_(fleet::instance_of(db_path_)) {
    if (config_.host.empty()) config_.host = default_fleet_host();
    state_.host = config_.host;
}

FleetPublisher::~FleetPublisher() { stop(); }

void FleetPublisher::start() {
    thread_ = std::thread([this] { run(); });
}

void FleetPublisher::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        // A publish of a big index, or one stuck on a stalled server, must not hold up the
        // daemon's exit: its transaction rolls back.
        if (publishing_ != nullptr) publishing_->cancel();
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void FleetPublisher::notify() {
    {
        std::lock_guard lock(mutex_);
        pending_ = true;
        backoff_.changed();
    }
    wake_.notify_one();
}

ipc::FleetInfo FleetPublisher::info() const {
    std::lock_guard lock(mutex_);
    return state_;
}

void FleetPublisher::run() {
    // Below the scans (nice 10, daemon/scan_service.cpp): a publish reads the whole index and
    // formats it for COPY, seconds of CPU for a big host, and must not slow the host's own
    // scans (or queries) that run meanwhile.
    if (auto st = set_thread_priority(kPublisherNice, IoClass::Idle); !st) {
        spdlog::warn("fleet: cannot lower the publisher's priority: {}", st.to_string());
    }
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return pending_ || stopping_; });
        if (stopping_) return;
        pending_ = false;
        lock.unlock();
        const bool ok = publish_once();
        lock.lock();
        if (ok) {
            backoff_.succeeded();
            continue;
        }
        // Retry when due, sooner if stopped; a notify meanwhile may bring the retry forward
        // (fleet/retry_backoff.hpp), so the deadline is read again after each wake-up.
        pending_ = true;
        backoff_.failed(fleet::RetryBackoff::Clock::now());
        while (!stopping_ && fleet::RetryBackoff::Clock::now() < backoff_.due()) {
            wake_.wait_until(lock, backoff_.due());
        }
    }
}

bool FleetPublisher::publish_once() {
    LocalIndexVersion version;
    core::Status st = local_version(db_path_, &version);
    {
        std::lock_guard lock(mutex_);
        if (st) {
            state_.local_generation = version.generation;
            if (published_ && *published_ == version) return true;  // nothing new
        }
    }
    fleet::PgConnection conn;
    std::string password;
    if (st) st = read_password(config_.password_file, &password);
    if (st) st = fleet::PgConnection::connect(config_.url, password, &conn);
    if (st) {
        std::lock_guard lock(mutex_);
        if (stopping_) return true;
        publishing_ = &conn;
    }
    if (st) st = fleet::ensure_schema(conn);
    fleet::PublishResult result;
    const auto began = std::chrono::steady_clock::now();
    if (st) st = fleet::publish(conn, db_path_, config_.host, instance_, &result);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    std::lock_guard lock(mutex_);
    publishing_ = nullptr;
    if (!st) {
        if (st.message() != state_.last_error) spdlog::error("fleet: {}", st.message());
        state_.last_error = st.message();
        state_.lag = static_cast<std::uint64_t>(std::max<std::int64_t>(
            0, state_.local_generation - std::max<std::int64_t>(state_.published_generation, 0)));
        return false;
    }
    if (!state_.last_error.empty()) spdlog::info("fleet: publishing again");
    // bench/fleet_publish.sh and bench/fleet_delta.sh read these lines.
    if (result.delta) {
        spdlog::info(
            "fleet: published generation {} of {} as a delta ({} entries removed, {} written, "
            "{} dirs rows; {} entries in all) in {:.3f} s",
            result.generation, config_.host, result.rows_deleted, result.rows_written, result.dirs,
            result.entries, seconds);
    } else {
        spdlog::info(
            "fleet: published generation {} of {} ({} entries, {} dirs) in {:.3f} s: in "
            "full, {}",
            result.generation, config_.host, result.entries, result.dirs, seconds, result.why_full);
    }
    state_.last_error.clear();
    // The state read in the publish's own transaction: what the fleet copy now equals.
    version.generation = result.generation;
    version.revision = result.revision;
    published_ = version;
    state_.published_generation = result.generation;
    state_.local_generation = std::max(state_.local_generation, result.generation);
    state_.published_at_ns = wall_ns();
    state_.lag = static_cast<std::uint64_t>(state_.local_generation - result.generation);
    return true;
}

}  // namespace wsindex::daemon
