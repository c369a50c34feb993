// ServerFixture: a real ipc::Server on a socket in a temporary directory, its io thread, and
// test handlers (ping, echo, peer, typed, stream, text, hold, throw, drop) with observable state.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ipc/client.hpp"
#include "ipc/server.hpp"
#include "tests/ipc/support/raw_connection.hpp"

namespace wsindex::ipc::testing {

// What a streaming producer saw; guarded by mutex, signalled on cv.
struct StreamRecord {
    std::mutex mutex;
    std::condition_variable cv;
    bool started = false;
    bool done = false;
    bool saw_would_block = false;
    std::size_t buffered_at_would_block = 0;
    std::size_t max_buffered = 0;
    std::uint64_t sent = 0;
    SendResult last = SendResult::Sent;
};

// Calls parked by test.Hold until the test answers them.
struct HeldCalls {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<Responder> responders;
    int closed_callbacks = 0;
};

class ServerFixture : public ::testing::Test {
  protected:
    void SetUp() override;
    void TearDown() override;

    // Starts the server with `options` on path_ and runs the io thread.
    void start(ServerOptions options = {});
    void stop_server();
    Client connect(ClientOptions options = {});

    template <class Pred>
    bool wait_for(std::mutex& m, std::condition_variable& cv, Pred pred,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        std::unique_lock lock(m);
        return cv.wait_for(lock, timeout, pred);
    }

    std::string dir_;
    std::string path_;
    boost::asio::io_context io_;
    std::unique_ptr<Server> server_;
    std::thread io_thread_;
    StreamRecord stream_;
    HeldCalls held_;
    std::mutex text_mutex_;
    std::vector<SendResult> text_results_;  // of the last test.Text call; guarded by text_mutex_
    std::mutex workers_mutex_;
    std::vector<std::thread> workers_;
};

}  // namespace wsindex::ipc::testing
