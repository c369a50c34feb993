// IndexWatch: a thread that runs one query over an index database again and again (each time
// in its own read-only snapshot, while the daemon writes) and keeps the first rows it ever
// returned. A race test's oracle: a row that must never exist is caught even when the daemon's
// next change removes it again a few milliseconds later, which a look now and then would miss.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace wsindex::cli::test {

class IndexWatch {
  public:
    // Starts watching `db` with `sql` (statements whose rows are findings; rendered as text,
    // one line per row).
    IndexWatch(std::string db, std::string sql);
    IndexWatch(const IndexWatch&) = delete;
    IndexWatch& operator=(const IndexWatch&) = delete;
    ~IndexWatch();

    // Stops the thread (idempotent).
    void stop();

    // The rows of the first query that returned any (empty: none yet), and errors reading.
    [[nodiscard]] std::string first_rows() const;
    [[nodiscard]] std::string error() const;
    // Queries run, and those that returned rows.
    [[nodiscard]] std::uint64_t queries() const { return queries_.load(); }
    [[nodiscard]] std::uint64_t hits() const { return hits_.load(); }

  private:
    void run();

    std::string db_;
    std::string sql_;
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> queries_{0};
    std::atomic<std::uint64_t> hits_{0};
    mutable std::mutex mutex_;
    std::string first_rows_;
    std::string error_;
    std::thread thread_;
};

}  // namespace wsindex::cli::test
