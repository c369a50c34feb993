// Client: blocking calls over a Unix socket with poll() deadlines and clear connect errors.
#include "ipc/client.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace wsindex::ipc {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string describe_socket_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    std::string group_name = std::to_string(st.st_gid);
    std::vector<char> buf(4096);
    struct group entry {};
    struct group* found = nullptr;
    if (::getgrgid_r(st.st_gid, &entry, buf.data(), buf.size(), &found) == 0 && found) {
        group_name = found->gr_name;
    }
    return std::string(" (mode ") + mode + ", group " + group_name + ")";
}

Error connect_error(int err, const std::string& path, milliseconds timeout) {
    switch (err) {
        case ENOENT:
        case ENOTDIR:
            return make_error(ErrorKind::NotRunning,
                              "wsindexd is not running (no socket at " + path + ")");
        case ECONNREFUSED: {
            struct stat st {};
            if (::stat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode)) {
                return make_error(ErrorKind::ConnectFailed, path + " is not a socket");
            }
            return make_error(ErrorKind::NotRunning, "wsindexd is not running (" + path +
                                                         " exists but nothing listens on it)");
        }
        case EACCES:
        case EPERM:
            return make_error(ErrorKind::PermissionDenied,
                              "permission denied connecting to " + path +
                                  describe_socket_file(path) +
                                  ": you need write access to the socket (its group, or run your "
                                  "own wsindexd)");
        case EAGAIN:
        case EINPROGRESS:
        case ETIMEDOUT:
            return make_error(ErrorKind::Timeout, "wsindexd did not accept the connection within " +
                                                      std::to_string(timeout.count()) + " ms (" +
                                                      path + ")");
        default:
            return make_error(ErrorKind::ConnectFailed,
                              "cannot connect to " + path + ": " + std::strerror(err));
    }
}

// Remaining time until `deadline` as a poll() timeout; -1 for no deadline.
int poll_timeout(Clock::time_point deadline) {
    if (deadline == Clock::time_point::max()) return -1;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

Clock::time_point deadline_after(milliseconds timeout) {
    return timeout.count() <= 0 ? Clock::time_point::max() : Clock::now() + timeout;
}

}  // namespace

Result<Client> Client::connect(const std::string& path, ClientOptions options) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
        return make_error(ErrorKind::ConnectFailed, "socket path '" + path + "' must be 1 to " +
                                                        std::to_string(sizeof addr.sun_path - 1) +
                                                        " bytes");
    }
    std::memcpy(addr.sun_path, path.data(), path.size());

    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return make_error(ErrorKind::ConnectFailed, std::string("socket: ") + std::strerror(errno));
    // A blocking connect on AF_UNIX waits for room in a full backlog for at most SO_SNDTIMEO.
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(options.connect_timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((options.connect_timeout.count() % 1000) * 1000);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int err = errno;
        ::close(fd);
        return connect_error(err, path, options.connect_timeout);
    }
    tv = timeval{};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);  // deadlines come from poll()
    return Client(fd, path, options);
}

Client::Client(int fd, std::string path, ClientOptions options)
    : fd_(fd),
      path_(std::move(path)),
      options_(options),
      decoder_(options.limits.max_message_bytes) {}

Client::Client(Client&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      options_(other.options_),
      decoder_(std::move(other.decoder_)),
      frames_(std::move(other.frames_)) {}

Client& Client::operator=(Client&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = std::exchange(other.fd_, -1);
        path_ = std::move(other.path_);
        options_ = other.options_;
        decoder_ = std::move(other.decoder_);
        frames_ = std::move(other.frames_);
    }
    return *this;
}

Client::~Client() { close(); }

void Client::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    frames_.clear();
}

Error Client::lost(ErrorKind kind, const std::string& message) {
    close();
    return make_error(kind, message);
}

std::optional<Error> Client::send_request(std::string_view method, const nlohmann::json& parameters,
                                          bool more) {
    if (fd_ < 0) return make_error(ErrorKind::Disconnected, "not connected to wsindexd");
    Request request;
    request.method = std::string(method);
    request.parameters = parameters.is_object() ? parameters : nlohmann::json::object();
    request.more = more;
    auto frame = encode_request(request, options_.limits);
    if (!frame) return std::move(frame.error());

    const std::string& bytes = frame.value();
    std::size_t sent = 0;
    const auto deadline = deadline_after(options_.reply_timeout);
    while (sent < bytes.size()) {
        const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd pfd{fd_, POLLOUT, 0};
            const int rc = ::poll(&pfd, 1, poll_timeout(deadline));
            if (rc == 0) return lost(ErrorKind::Timeout, "timed out sending a request to wsindexd");
            continue;
        }
        // The server closed on us; it may have said why first (Busy, MessageTooLarge).
        const int err = errno;
        auto early = read_frame(milliseconds(1000));
        if (early) {
            auto reply = parse_reply(early.value(), options_.limits);
            if (!reply) {
                close();
                return std::move(reply.error());
            }
        }
        return lost(ErrorKind::Disconnected,
                    std::string("wsindexd closed the connection: ") + std::strerror(err));
    }
    return std::nullopt;
}

Result<std::string> Client::read_frame(milliseconds timeout) {
    if (!frames_.empty()) {
        std::string frame = std::move(frames_.front());
        frames_.pop_front();
        return frame;
    }
    if (fd_ < 0) return make_error(ErrorKind::Disconnected, "not connected to wsindexd");
    const auto deadline = deadline_after(timeout);
    std::array<char, 64 * 1024> buf{};
    while (frames_.empty()) {
        const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
        if (n > 0) {
            std::vector<std::string> frames;
            if (!decoder_.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)), frames)) {
                return lost(ErrorKind::Protocol, "wsindexd sent a message over " +
                                                     std::to_string(decoder_.max_message_bytes()) +
                                                     " bytes");
            }
            for (auto& f : frames) frames_.push_back(std::move(f));
            continue;
        }
        if (n == 0) return lost(ErrorKind::Disconnected, "wsindexd closed the connection");
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            pollfd pfd{fd_, POLLIN, 0};
            const int rc = ::poll(&pfd, 1, poll_timeout(deadline));
            if (rc == 0) {
                return lost(ErrorKind::Timeout, "no reply from wsindexd within " +
                                                    std::to_string(timeout.count()) + " ms");
            }
            continue;
        }
        return lost(ErrorKind::Disconnected,
                    std::string("connection to wsindexd lost: ") + std::strerror(errno));
    }
    std::string frame = std::move(frames_.front());
    frames_.pop_front();
    return frame;
}

Result<Reply> Client::read_reply() {
    auto frame = read_frame(options_.reply_timeout);
    if (!frame) return std::move(frame.error());
    return parse_reply_frame(frame.value());
}

Result<Reply> Client::parse_reply_frame(std::string_view frame) {
    auto reply = parse_reply(frame, options_.limits);
    if (!reply) {
        const ErrorKind kind = reply.error().kind;
        // After these the server closes the connection; a garbled reply leaves us out of step.
        if (kind == ErrorKind::Protocol || kind == ErrorKind::InvalidRequest ||
            kind == ErrorKind::MessageTooLarge || kind == ErrorKind::Busy) {
            close();
        }
    }
    return reply;
}

Result<nlohmann::json> Client::call(std::string_view method, const nlohmann::json& parameters) {
    if (auto error = send_request(method, parameters, false)) return std::move(*error);
    auto reply = read_reply();
    if (!reply) return std::move(reply.error());
    if (reply->continues) {
        return lost(ErrorKind::Protocol, "wsindexd streamed a reply to a call without \"more\"");
    }
    return std::move(reply->parameters);
}

std::optional<Error> Client::call_more(std::string_view method, const nlohmann::json& parameters,
                                       const ReplyCallback& on_reply, const FrameReader& fast) {
    if (auto error = send_request(method, parameters, true)) return error;
    for (;;) {
        auto frame = read_frame(options_.reply_timeout);
        if (!frame) return std::move(frame.error());
        if (fast) {
            if (const std::optional<bool> continues = fast(frame.value())) {
                if (!*continues) return std::nullopt;
                continue;
            }
        }
        auto reply = parse_reply_frame(frame.value());
        if (!reply) return std::move(reply.error());
        const bool continues = reply->continues;
        if (!on_reply(reply->parameters, continues)) {
            if (continues) close();  // the only way to stop a stream: hang up
            return std::nullopt;
        }
        if (!continues) return std::nullopt;
    }
}

}  // namespace wsindex::ipc
