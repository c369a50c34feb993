// ServerCore and Session (internal): the acceptor, the registry of handlers and connections,
// and the per-connection state machine. Everything here lives on the io thread, except the
// atomic connection count.
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ipc/call_state.hpp"
#include "ipc/frame_decoder.hpp"
#include "ipc/server.hpp"

namespace wsindex::ipc::detail {

namespace asio = boost::asio;
using stream_protocol = asio::local::stream_protocol;
using Clock = std::chrono::steady_clock;

class Session;

class ServerCore : public std::enable_shared_from_this<ServerCore> {
  public:
    ServerCore(asio::io_context& io, ServerOptions options);
    ~ServerCore();

    void start_accepting();                        // io thread
    void shutdown();                               // io thread
    void unregister(std::uint64_t id, uid_t uid);  // io thread, from Session::close
    // May a new connection from `peer` open now? Empty: yes (possibly after closing an idle
    // connection to make room); else why not. io thread. ipc/admission.cpp.
    std::string admit(const PeerCredentials& peer);
    const Handler* find_handler(std::string_view method) const;
    void log(LogLevel level, std::string_view text) const;

    asio::io_context& io_;
    const ServerOptions options_;
    stream_protocol::acceptor acceptor_;
    // Accept pauses after EMFILE instead of spinning on a listener that stays readable.
    asio::steady_timer accept_pause_;
    std::map<std::string, Handler, std::less<>> handlers_;  // fixed after start()
    std::unordered_map<std::uint64_t, std::weak_ptr<Session>> sessions_;
    std::unordered_map<uid_t, std::size_t> per_uid_;
    std::atomic<std::size_t> connection_count_{0};  // read from any thread
    std::uint64_t next_id_ = 1;
    bool stopped_ = false;
    std::uint64_t refused_since_log_ = 0;  // connections refused at the caps, not yet logged
    Clock::time_point last_refusal_log_{};
    std::string socket_path_;  // set by listen(); empty for from_fd()
    dev_t socket_dev_ = 0;
    ino_t socket_ino_ = 0;

  private:
    bool is_privileged(const PeerCredentials& peer) const;
    // Closes the longest-idle connection of the uid holding the most connections, if that uid
    // holds more than `newcomer_holds` + 1 (so the newcomer never ends up with more than it).
    bool evict_for(uid_t newcomer, std::size_t newcomer_holds);
    void do_accept();
    void on_accept(const boost::system::error_code& ec, stream_protocol::socket socket);
};

class Session : public std::enable_shared_from_this<Session> {
  public:
    Session(std::shared_ptr<ServerCore> core, stream_protocol::socket socket, PeerCredentials peer,
            std::uint64_t id);
    ~Session();

    void start();
    [[nodiscard]] uid_t uid() const { return peer_.uid; }
    // When it became idle, if it is idle with nothing left to write and no request partly
    // received (closing it loses nothing); nullopt otherwise. io thread.
    [[nodiscard]] std::optional<Clock::time_point> idle_since() const;
    // Closes the socket, cancels the running call and unregisters. Idempotent. io thread.
    void close(std::string_view why);

  private:
    struct OutFrame {
        std::string bytes;
        std::shared_ptr<CallState> owner;  // released after writing; null for session errors
    };

    void maybe_read();
    void on_read(const boost::system::error_code& ec, std::size_t n);
    void on_eof();
    void dispatch_next();
    void run_handler(const Handler& handler, Request request);
    void drain_current();
    void on_call_output();
    void queue_error(const Error& error);
    void start_write();
    void on_write(const boost::system::error_code& ec);
    void update_timer();
    void on_timer(const boost::system::error_code& ec);
    Clock::time_point read_deadline() const;
    bool idle() const { return !current_ && pending_.empty(); }
    std::shared_ptr<CallState> make_call(bool more);

    std::shared_ptr<ServerCore> core_;
    stream_protocol::socket socket_;
    asio::steady_timer timer_;
    const PeerCredentials peer_;
    const std::uint64_t id_;

    std::array<char, 16 * 1024> read_buf_{};
    FrameDecoder decoder_;
    std::deque<std::string> pending_;     // complete frames waiting for the current call
    std::shared_ptr<CallState> current_;  // the call being answered, if any
    std::optional<Error> fatal_;          // answered after pending_, then the connection closes
    std::deque<OutFrame> out_;            // frames waiting to be written
    std::vector<OutFrame> writing_;       // frames of the async_write in flight
    std::vector<asio::const_buffer> write_buffers_;

    bool reading_ = false;
    bool writing_now_ = false;
    bool read_eof_ = false;  // the peer shut down its write side
    bool close_after_flush_ = false;
    bool closed_ = false;
    Clock::time_point idle_since_;
    Clock::time_point partial_since_;
    Clock::time_point write_deadline_ = Clock::time_point::max();
    Clock::time_point timer_expiry_ = Clock::time_point::max();  // what the timer waits for
};

}  // namespace wsindex::ipc::detail
