// FleetPublisher: publishes this host's index to the fleet database (docs/fleet.md) on its own
// thread with its own connections, so that scans and live updates never wait for PostgreSQL.
// notify() (any thread, after a scan or a live batch settles) only sets a flag: changes that
// pile up while a publish runs are coalesced into one publish of the newest state. A failed
// publish (PostgreSQL down, wrong credentials, full disk) is retried with a growing delay,
// brought forward by a notify (fleet/retry_backoff.hpp).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "daemon/config.hpp"
#include "fleet/retry_backoff.hpp"
#include "ipc/methods.hpp"

namespace wsindex::fleet {
class PgConnection;  // libpq stays out of the daemon's headers
}  // namespace wsindex::fleet

namespace wsindex::daemon {

// What identifies one state of the local index for the publisher: the database file (an
// index rebuilt from scratch is a new file whose counters start again) and its counters
// (storage/index_version.hpp).
struct LocalIndexVersion {
    dev_t dev = 0;
    ino_t ino = 0;
    std::int64_t generation = 0;
    std::int64_t revision = 0;
    bool operator==(const LocalIndexVersion&) const = default;
};

class FleetPublisher {
  public:
    FleetPublisher(FleetConfig config, std::string db_path);
    FleetPublisher(const FleetPublisher&) = delete;
    FleetPublisher& operator=(const FleetPublisher&) = delete;
    ~FleetPublisher();  // stop()

    void start();
    void stop();    // cancels a publish under way (rolled back whole), joins the thread
    void notify();  // any thread; never blocks on PostgreSQL
    [[nodiscard]] ipc::FleetInfo info() const;

  private:
    void run();
    bool publish_once();  // false: failed (state_.last_error says why)

    FleetConfig config_;
    std::string db_path_;
    std::string instance_;  // fleet::instance_of(db_path_): this daemon's claim on its host name
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    const fleet::PgConnection* publishing_ = nullptr;  // the connection of a publish under way
    std::optional<LocalIndexVersion> published_;       // what the last publish read
    bool pending_ = true;  // publish at start: the database may lag behind the index
    bool stopping_ = false;
    // When a failed publish is retried: after 1 s, 2 s, 4 s ... up to 60 s, or 1 s after the
    // failure when notify() brings something new.
    fleet::RetryBackoff backoff_{std::chrono::seconds(1), std::chrono::seconds(60)};
    ipc::FleetInfo state_;
    std::thread thread_;
};

// The host name used when [fleet] host is not set.
std::string default_fleet_host();

}  // namespace wsindex::daemon
