// RawConnection: a bare Unix-socket client for tests that must misbehave (garbage, half-close,
// silence, oversize) where ipc::Client would refuse to. Blocking, with poll() deadlines.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

namespace wsindex::ipc::testing {

using namespace std::chrono_literals;

class RawConnection {
  public:
    explicit RawConnection(const std::string& path) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, path.data(), path.size());
        if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~RawConnection() { close(); }
    RawConnection(const RawConnection&) = delete;
    RawConnection& operator=(const RawConnection&) = delete;

    bool ok() const { return fd_ >= 0; }
    int fd() const { return fd_; }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

    // False if the peer closed before everything was sent.
    bool send(const std::string& bytes) {
        std::size_t sent = 0;
        while (sent < bytes.size()) {
            const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return false;
            sent += static_cast<std::size_t>(n);
        }
        return true;
    }

    // The next NUL-terminated frame (without the NUL), or nullopt on EOF/error/deadline.
    std::optional<std::string> read_frame(std::chrono::milliseconds timeout = 10s) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const auto nul = buffer_.find('\0');
            if (nul != std::string::npos) {
                std::string frame = buffer_.substr(0, nul);
                buffer_.erase(0, nul + 1);
                return frame;
            }
            if (!wait_readable(deadline)) return std::nullopt;
            char buf[65536];
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) return std::nullopt;
            buffer_.append(buf, static_cast<std::size_t>(n));
        }
    }

    // True once the server has closed the connection (EOF or reset) before the deadline;
    // anything it still sends is discarded.
    bool wait_closed(std::chrono::milliseconds timeout = 10s) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            if (!wait_readable(deadline)) return false;
            char buf[65536];
            const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) return true;
        }
    }

    // True if nothing at all is pending (no data, no EOF) right now.
    bool quiet_now() const {
        pollfd pfd{fd_, POLLIN, 0};
        return ::poll(&pfd, 1, 0) == 0;
    }

  private:
    bool wait_readable(std::chrono::steady_clock::time_point deadline) {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return false;
            pollfd pfd{fd_, POLLIN, 0};
            const int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
            if (rc > 0) return true;
            if (rc == 0) return false;
        }
    }

    int fd_ = -1;
    std::string buffer_;
};

// Polls `pred` until it holds or the deadline passes: for liveness checks only (e.g. "the
// server has accepted N connections"), never to order events.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) return true;
        std::this_thread::sleep_for(1ms);
    }
    return pred();
}

}  // namespace wsindex::ipc::testing
