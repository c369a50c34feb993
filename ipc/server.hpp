// Server: the Boost.Asio Unix-socket server that reads requests and dispatches them to handlers.
//
// Threading: everything runs on the one thread that runs the given io_context (the daemon's
// main loop); handlers are called there and must not block — long work goes to other threads
// with the Responder (ipc/responder.hpp), which is safe from any thread. Nothing throws out of
// an Asio handler: errors are error_codes, and a throwing method handler becomes Internal.
//
// Per connection (a Session): requests are NUL-framed and answered one at a time in order
// (pipelined requests wait, up to max_pipelined); a frame over the size cap gets
// MessageTooLarge and the connection is closed; a frame that is not a request (garbage, not an
// object, no method) gets InvalidRequest and the connection is closed, because a peer that
// does not speak the protocol will not start to; an unknown method (MethodNotFound) or bad
// parameters (InvalidParameter) leave the connection open. Idle connections, requests that
// trickle in, and clients that stop reading replies are cut off by timeouts; connections are
// capped in total and per uid (over the cap: one Busy error, then close), with a few slots kept
// for privileged callers and, when all are taken, the longest-idle connection of the biggest
// holder closed to admit a caller who holds fewer (ipc/admission.cpp). Peer credentials
// (SO_PEERCRED) come with every call.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.hpp"
#include "ipc/methods.hpp"
#include "ipc/protocol.hpp"
#include "ipc/responder.hpp"
#include "ipc/unix_socket.hpp"

namespace wsindex::ipc {

// One request as a handler sees it.
struct Call {
    std::string method;
    nlohmann::json parameters;  // an object
    bool more = false;          // the caller accepts streamed replies
    PeerCredentials peer;       // who is calling
    std::uint64_t connection_id = 0;
};

using Handler = std::function<void(Call call, Responder responder)>;

enum class LogLevel { Debug, Info, Warning, Error };

struct ServerOptions {
    Limits limits;  // max message size (both directions) and nesting depth
    // 256 connections: wsctl uses one at a time; a few hundred covers scripts and monitors.
    std::size_t max_connections = 256;
    // One local user cannot take every slot from the others.
    std::size_t max_connections_per_uid = 64;
    // Of max_connections, this many are kept for privileged callers (below): when the rest are
    // taken, root can still connect to look and to cancel. See "Connection limits" in
    // docs/daemon.md for the whole admission rule (eviction of idle connections included).
    std::size_t reserved_connections = 8;
    // Who may use the reserved slots. Called on the io thread, only when the shared slots are
    // full; must not block. Empty: root and the server's own effective uid.
    std::function<bool(const PeerCredentials&)> privileged;
    // No request for this long with nothing in progress: the connection is closed.
    std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
    // From a request's first byte to its NUL: a client trickling bytes is cut off after this.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(10)};
    // One write of queued replies must finish within this: a client that stops reading is cut.
    std::chrono::milliseconds write_timeout{std::chrono::seconds(30)};
    // Complete requests waiting behind the running one; beyond it reading pauses.
    std::size_t max_pipelined = 16;
    // Per call: reply bytes queued and not yet written before Responder::more() blocks.
    std::size_t max_buffered_reply_bytes = 256 * 1024;
    // Optional sink for one-line events (never per message at Info and above).
    std::function<void(LogLevel, std::string_view)> log;
};

namespace detail {
class ServerCore;
}

class Server {
  public:
    Server(boost::asio::io_context& io, ServerOptions options = {});
    // Stops (see stop()). Sessions may outlive the Server object until the io thread has
    // finished closing them; they share the internals, never the Server.
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Registers the handler of a method ("wsindex.Find"). Before start() only.
    void add_method(std::string name, Handler handler);

    // Like add_method, with the parameters decoded as Params first (from_json<Params>); bad
    // parameters are answered with InvalidParameter without calling `fn`.
    // fn: void(const Call&, Params, Responder).
    template <class Params, class Fn>
    void add_typed_method(std::string name, Fn fn) {
        add_method(std::move(name), [fn = std::move(fn)](Call call, Responder responder) mutable {
            auto params = from_json<Params>(call.parameters);
            if (!params) {
                responder.fail(params.error());
                return;
            }
            fn(call, std::move(params.value()), std::move(responder));
        });
    }

    // Binds `path` (see bind_unix_socket: stale sockets replaced, live ones refused) with the
    // given mode and optional group. Call once, before start().
    core::Status listen(const std::string& path, const BindOptions& options = {});
    // Adopts an already-listening socket (systemd socket activation): the server owns `fd`
    // from now on, and never removes a socket file it did not create.
    core::Status from_fd(int fd);

    // Starts accepting. Call after listen()/from_fd(), from any thread; work happens when the
    // io_context runs.
    void start();
    // Closes the listener and every connection (running calls see Closed), removes the socket
    // file we created. Any thread; idempotent; returns without waiting for the io thread.
    void stop();

    // Open connections now. Any thread.
    [[nodiscard]] std::size_t connection_count() const;
    // The path bound by listen(), empty for from_fd().
    [[nodiscard]] const std::string& socket_path() const;

  private:
    std::shared_ptr<detail::ServerCore> core_;
    std::string socket_path_;  // owner thread; the core keeps its own copy for the io thread
};

}  // namespace wsindex::ipc
