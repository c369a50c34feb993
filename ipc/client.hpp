// Client: the blocking client library for wsctl — connect, call, call with streamed replies.
//
// One connection, one call at a time, plain POSIX sockets with poll() deadlines (no Asio: the
// CLI has nothing else to wait for). Every failure is an ipc::Error: the server's typed errors
// as they came, and local ones — NotRunning ("wsindexd is not running (no socket at PATH)"),
// PermissionDenied, Timeout, Disconnected, Protocol — with messages meant to be shown as is.
// After a local error mid-call the connection is closed (the stream may be out of step).
// Not thread-safe: one thread uses a Client at a time.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "ipc/frame_decoder.hpp"
#include "ipc/protocol.hpp"
#include "ipc/result.hpp"

namespace wsindex::ipc {

struct ClientOptions {
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
    // Longest wait for each reply (for streams: between two replies); zero waits forever
    // (wsctl scan --wait on a slow disk).
    std::chrono::milliseconds reply_timeout{std::chrono::seconds(60)};
    Limits limits;
};

class Client {
  public:
    static Result<Client> connect(const std::string& path, ClientOptions options = {});

    Client(Client&& other) noexcept;
    Client& operator=(Client&& other) noexcept;
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    ~Client();

    // One request, one reply: the reply's parameters, or the error. A streamed reply
    // ("continues") is a Protocol error here: use call_more.
    Result<nlohmann::json> call(std::string_view method, const nlohmann::json& parameters);

    // Sends the request with "more": true and calls on_reply(parameters, continues) for each
    // reply until the last one. on_reply returns false to stop early: the connection is then
    // closed, which tells the server to stop producing. nullopt on success.
    //
    // `fast`, when given, is offered each reply frame's text first (without its NUL): it returns
    // the reply's "continues" when it decoded the frame itself (without a DOM, as
    // FindReplyReader does), or nullopt to decline, and then the frame is parsed as usual and
    // goes to on_reply. A fast reader cannot stop the stream; it must decline error messages.
    using ReplyCallback = std::function<bool(const nlohmann::json& parameters, bool continues)>;
    using FrameReader = std::function<std::optional<bool>(std::string_view frame)>;
    std::optional<Error> call_more(std::string_view method, const nlohmann::json& parameters,
                                   const ReplyCallback& on_reply, const FrameReader& fast = {});

    [[nodiscard]] bool connected() const { return fd_ >= 0; }
    void set_reply_timeout(std::chrono::milliseconds timeout) { options_.reply_timeout = timeout; }
    // Closes the connection (idempotent).
    void close();

  private:
    Client(int fd, std::string path, ClientOptions options);

    std::optional<Error> send_request(std::string_view method, const nlohmann::json& parameters,
                                      bool more);
    Result<Reply> read_reply();
    // A frame read as a reply (parse_reply); closes the connection after fatal errors.
    Result<Reply> parse_reply_frame(std::string_view frame);
    Result<std::string> read_frame(std::chrono::milliseconds timeout);
    Error lost(ErrorKind kind, const std::string& message);

    int fd_ = -1;
    std::string path_;
    ClientOptions options_;
    FrameDecoder decoder_;
    std::deque<std::string> frames_;  // complete frames read ahead
};

}  // namespace wsindex::ipc
