// Session: one connection — read frames, answer calls in order, write replies, enforce timeouts.
//
// State machine, all on the io thread:
//   reading    one async_read_some at a time, while fewer than max_pipelined requests wait and
//              the connection is not condemned (fatal_ or close_after_flush_);
//   dispatch   the next pending frame becomes the current call when none runs; its replies
//              come through its CallState, drained in order into out_;
//   writing    one async_write at a time, gathering the queued frames;
//   closing    after a fatal error is flushed, on EOF with nothing left to answer, on a
//              timeout, a write error, or a hang-up while a call runs.
// EOF is not "gone": a peer may shut down its write side and still read replies (half-close).
// A peer that closed completely raises POLLHUP, which we watch for while a call is running so
// its producers learn at once that nobody listens.
#include <poll.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "ipc/server_core.hpp"

namespace wsindex::ipc::detail {

namespace {
// At most this much is gathered into one async_write (bytes); the rest waits its turn.
constexpr std::size_t kMaxWriteBatchBytes = 256 * 1024;
}  // namespace

Session::Session(std::shared_ptr<ServerCore> core, stream_protocol::socket socket,
                 PeerCredentials peer, std::uint64_t id)
    : core_(std::move(core)),
      socket_(std::move(socket)),
      timer_(core_->io_),
      peer_(peer),
      id_(id),
      decoder_(core_->options_.limits.max_message_bytes) {}

Session::~Session() {
    // Reached only after close() (handlers hold shared_ptrs), or when the io_context itself is
    // destroyed with handlers pending: then make sure producers stop posting to it.
    if (current_) current_->close();
}

void Session::start() {
    idle_since_ = Clock::now();
    core_->log(LogLevel::Debug, "connection " + std::to_string(id_) + " from pid " +
                                    std::to_string(peer_.pid) + " uid " +
                                    std::to_string(peer_.uid));
    maybe_read();
    update_timer();
}

std::optional<Clock::time_point> Session::idle_since() const {
    // A request partly received is not idle either: closing would lose it (a client that
    // trickles one is cut by the request timeout instead).
    if (closed_ || !idle() || !out_.empty() || writing_now_ || close_after_flush_ ||
        decoder_.buffered() > 0) {
        return std::nullopt;
    }
    return idle_since_;
}

void Session::close(std::string_view why) {
    if (closed_) return;
    closed_ = true;
    core_->log(LogLevel::Debug,
               "connection " + std::to_string(id_) + " closed: " + std::string(why));
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);  // pending reads/writes complete with operation_aborted
    if (current_) current_->close();
    current_.reset();
    pending_.clear();
    out_.clear();
    core_->unregister(id_, peer_.uid);
}

// ---- reading ---------------------------------------------------------------------------------

void Session::maybe_read() {
    if (closed_ || reading_ || read_eof_ || fatal_ || close_after_flush_) return;
    if (pending_.size() >= core_->options_.max_pipelined) return;  // resumed by dispatch_next
    reading_ = true;
    socket_.async_read_some(asio::buffer(read_buf_),
                            [self = shared_from_this()](const boost::system::error_code& ec,
                                                        std::size_t n) { self->on_read(ec, n); });
}

void Session::on_read(const boost::system::error_code& ec, std::size_t n) {
    reading_ = false;
    if (closed_) return;
    if (ec == asio::error::eof) {
        read_eof_ = true;
        on_eof();
        return;
    }
    if (ec) {
        close("read failed: " + ec.message());
        return;
    }
    const bool had_partial = decoder_.buffered() > 0;
    std::vector<std::string> frames;
    const bool ok = decoder_.feed(std::string_view(read_buf_.data(), n), frames);
    for (auto& frame : frames) pending_.push_back(std::move(frame));
    if (!ok) {
        // Answered in order, after the requests that came before it; then the connection
        // closes: the rest of the oversize message cannot be told apart from new ones.
        fatal_ = make_error(ErrorKind::MessageTooLarge,
                            "message exceeds the limit of " +
                                std::to_string(decoder_.max_message_bytes()) + " bytes");
    } else if (decoder_.buffered() > 0 && (!had_partial || !frames.empty())) {
        partial_since_ = Clock::now();  // a new request has started to arrive
    }
    dispatch_next();
    start_write();
    maybe_read();
    update_timer();
}

void Session::on_eof() {
    if (idle() && !fatal_) {
        // Nothing left to answer: close once the queued replies are written.
        close_after_flush_ = true;
        if (!writing_now_ && out_.empty()) close("peer closed the connection");
        return;
    }
    // Still answering. Watch for the peer hanging up completely (POLLHUP: both directions shut)
    // so a running call learns that no one will read it; a half-closed peer keeps reading.
    socket_.async_wait(stream_protocol::socket::wait_error,
                       [self = shared_from_this()](const boost::system::error_code& ec) {
                           if (!ec && !self->closed_) self->close("peer hung up");
                       });
    pollfd pfd{socket_.native_handle(), 0, 0};
    if (::poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR)) != 0) {
        close("peer hung up");
        return;
    }
    dispatch_next();
    start_write();
    update_timer();
}

// ---- dispatching -----------------------------------------------------------------------------

std::shared_ptr<CallState> Session::make_call(bool more) {
    CallState::Hooks hooks;
    std::weak_ptr<Session> weak = weak_from_this();
    asio::io_context& io = core_->io_;
    hooks.wake = [weak, &io] {
        asio::post(io, [weak] {
            if (auto self = weak.lock()) self->on_call_output();
        });
    };
    hooks.on_io_thread = [&io] { return io.get_executor().running_in_this_thread(); };
    return std::make_shared<CallState>(more, core_->options_.max_buffered_reply_bytes,
                                       core_->options_.limits.max_message_bytes, std::move(hooks));
}

void Session::queue_error(const Error& error) { out_.push_back({encode_error(error), nullptr}); }

void Session::dispatch_next() {
    while (!closed_ && !close_after_flush_ && !current_) {
        if (pending_.empty()) {
            if (fatal_) {
                queue_error(*fatal_);
                fatal_.reset();
                close_after_flush_ = true;
            } else if (read_eof_) {
                close_after_flush_ = true;
            } else {
                idle_since_ = Clock::now();
            }
            break;
        }
        std::string frame = std::move(pending_.front());
        pending_.pop_front();
        maybe_read();  // there may be room in pending_ again

        auto request = parse_request(frame, core_->options_.limits);
        if (!request) {
            // Not a request at all: this peer does not speak the protocol. Answer and close.
            queue_error(request.error());
            pending_.clear();
            fatal_.reset();
            close_after_flush_ = true;
            break;
        }
        const Handler* handler = core_->find_handler(request->method);
        if (!handler) {
            queue_error(make_error(ErrorKind::MethodNotFound, "no method '" + request->method + "'",
                                   nlohmann::json{{"method", request->method}}));
            continue;
        }
        run_handler(*handler, std::move(request.value()));
        drain_current();  // a synchronous answer is written without a round trip through post
    }
}

void Session::run_handler(const Handler& handler, Request request) {
    current_ = make_call(request.more);
    Call call{std::move(request.method), std::move(request.parameters), request.more, peer_, id_};
    Responder responder(current_);
    std::string method = call.method;
    // Exceptions stop here: a throwing handler is a bug, answered as Internal.
    try {
        handler(std::move(call), std::move(responder));
    } catch (const std::exception& e) {
        current_->push_error(
            make_error(ErrorKind::Internal, "method " + method + " failed: " + e.what()));
        core_->log(LogLevel::Error, "method " + method + " threw: " + e.what());
    } catch (...) {
        current_->push_error(make_error(ErrorKind::Internal, "method " + method + " failed"));
        core_->log(LogLevel::Error, "method " + method + " threw a non-exception");
    }
}

void Session::drain_current() {
    if (!current_) return;
    CallState::Drained drained = current_->drain();
    for (auto& frame : drained.frames) out_.push_back({std::move(frame), current_});
    if (drained.finished) {
        current_.reset();
        idle_since_ = Clock::now();
    }
}

void Session::on_call_output() {
    if (closed_) return;
    drain_current();
    dispatch_next();
    start_write();
    update_timer();
}

// ---- writing ---------------------------------------------------------------------------------

void Session::start_write() {
    if (closed_ || writing_now_) return;
    if (out_.empty()) {
        if (close_after_flush_) close("done");
        return;
    }
    writing_.clear();
    write_buffers_.clear();
    std::size_t total = 0;
    while (!out_.empty() &&
           (writing_.empty() || total + out_.front().bytes.size() <= kMaxWriteBatchBytes)) {
        total += out_.front().bytes.size();
        writing_.push_back(std::move(out_.front()));
        out_.pop_front();
    }
    for (const auto& frame : writing_) write_buffers_.push_back(asio::buffer(frame.bytes));
    writing_now_ = true;
    write_deadline_ = Clock::now() + core_->options_.write_timeout;
    asio::async_write(socket_, write_buffers_,
                      [self = shared_from_this()](const boost::system::error_code& ec,
                                                  std::size_t) { self->on_write(ec); });
}

void Session::on_write(const boost::system::error_code& ec) {
    writing_now_ = false;
    write_deadline_ = Clock::time_point::max();
    for (auto& frame : writing_) {
        if (frame.owner) frame.owner->release(frame.bytes.size());
    }
    writing_.clear();
    write_buffers_.clear();
    if (closed_) return;
    if (ec) {
        close("write failed: " + ec.message());
        return;
    }
    start_write();
    update_timer();
}

// ---- timeouts --------------------------------------------------------------------------------

Clock::time_point Session::read_deadline() const {
    // While we answer, the client waits for us: no read deadline.
    if (!idle() || fatal_ || close_after_flush_ || read_eof_) return Clock::time_point::max();
    if (decoder_.buffered() > 0) return partial_since_ + core_->options_.request_timeout;
    return idle_since_ + core_->options_.idle_timeout;
}

void Session::update_timer() {
    if (closed_) return;
    const Clock::time_point deadline = std::min(read_deadline(), write_deadline_);
    if (deadline == Clock::time_point::max() || deadline >= timer_expiry_) return;
    // Earlier than what the timer waits for: re-arm. A later deadline is handled lazily: the
    // timer fires, finds nothing due, and re-arms.
    timer_expiry_ = deadline;
    timer_.expires_at(deadline);  // cancels the previous wait
    timer_.async_wait(
        [self = shared_from_this()](const boost::system::error_code& ec) { self->on_timer(ec); });
}

void Session::on_timer(const boost::system::error_code& ec) {
    if (closed_ || ec == asio::error::operation_aborted) return;
    timer_expiry_ = Clock::time_point::max();
    const Clock::time_point now = Clock::now();
    if (write_deadline_ <= now) {
        close("client did not read replies within the write timeout");
        return;
    }
    if (read_deadline() <= now) {
        close(decoder_.buffered() > 0 ? "request not completed within the request timeout"
                                      : "idle timeout");
        return;
    }
    update_timer();
}

}  // namespace wsindex::ipc::detail
