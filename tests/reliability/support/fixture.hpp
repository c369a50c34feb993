// The reliability fixture: the e2e fixture of tests/cli (a real wsindexd on a scratch socket and
// database, the real wsctl), plus direct protocol calls (fast status polls between faults) and
// the environment knobs of the long runs.
#pragma once

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "ipc/bytes_codec.hpp"
#include "ipc/client.hpp"
#include "ipc/methods.hpp"
#include "tests/cli/support/fixture.hpp"

namespace wsindex::reliability::test {

using cli::test::EndToEnd;

// An unsigned environment variable, or `fallback` when unset or empty.
inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && v[0] != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}
inline std::string env_text(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
}

class DaemonFixture : public EndToEnd {
  protected:
    // One protocol call on a fresh connection; the reply's parameters or the error text.
    ipc::Result<nlohmann::json> call(std::string_view method, const nlohmann::json& params) {
        ipc::ClientOptions options;
        options.reply_timeout = std::chrono::minutes(2);
        auto client = ipc::Client::connect(daemon_->socket(), options);
        if (!client) return client.error();
        return client->call(method, params);
    }

    // Status's running scan once it has a scan id (its row is in the database), polled with a
    // deadline; nullopt if none showed up (the scan may have ended first).
    std::optional<nlohmann::json> wait_running(std::chrono::seconds deadline_after) {
        return poll_running([](const nlohmann::json&) { return true; }, deadline_after, nullptr);
    }

    // Status's running scan once it is counted at least `entries` entries and is still running
    // (its row is in the database, its swap not yet made), polled; nullopt if the scan ended
    // before that (nothing running or queued any more), or on a status error or after
    // `deadline_after` (failures).
    std::optional<nlohmann::json> wait_progress(std::uint64_t entries,
                                                std::chrono::seconds deadline_after) {
        bool timed_out = false;
        auto running = poll_running(
            [entries](const nlohmann::json& r) {
                return r.value("state", "") == "running" &&
                       r.value("entries", std::uint64_t{0}) >= entries;
            },
            deadline_after, &timed_out);
        if (timed_out) {
            ADD_FAILURE() << "the scan neither reached " << entries << " entries nor ended in "
                          << deadline_after.count() << " s";
        }
        return running;
    }

    // Starts a scan of `root` without waiting.
    void start_scan(const std::string& root) {
        auto reply = call(ipc::method::kScan, {{"paths", {ipc::encode_bytes(root)}}});
        ASSERT_TRUE(reply.ok()) << reply.error().to_string();
    }

    // `wsctl scans --json`'s scans array, newest first.
    nlohmann::json scans() { return json_of({"scans"})["scans"]; }

  private:
    // Polls status until its running scan has a scan id and satisfies `wanted` (returned), or
    // nothing runs or waits any more (nullopt), or the deadline passed (nullopt, *timed_out).
    template <class Wanted>
    std::optional<nlohmann::json> poll_running(Wanted wanted, std::chrono::seconds deadline_after,
                                               bool* timed_out) {
        const auto deadline = std::chrono::steady_clock::now() + deadline_after;
        while (std::chrono::steady_clock::now() < deadline) {
            auto status = call(ipc::method::kStatus, nlohmann::json::object());
            if (!status) {
                ADD_FAILURE() << "status failed: " << status.error().to_string();
                return std::nullopt;
            }
            const auto& running = status.value()["running"];
            if (running.is_object() && running.value("scan_id", 0) > 0 && wanted(running)) {
                return running;
            }
            if (status.value()["queued"].empty() && !running.is_object()) return std::nullopt;
            // The period of a liveness poll (not a guess at a duration): keeps the poll from
            // taking a core away from the scan it waits for.
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (timed_out != nullptr) *timed_out = true;
        return std::nullopt;
    }
};

}  // namespace wsindex::reliability::test
