// CallState (internal): the shared, locked state of one call between its producers and its session.
//
// Producers (any thread, through Responder) push encoded frames into the outbox in the order
// they take the mutex, which is the order they are written: a single queue per call under one
// mutex is what keeps a handler's io-thread reply and a worker's later reply in order (two
// asio::post calls from different threads would not be). The session (io thread) drains the
// outbox when poked and releases the bytes once they are written, which wakes blocked producers.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/responder.hpp"
#include "ipc/result.hpp"

namespace wsindex::ipc::detail {

class CallState {
  public:
    struct Hooks {
        // Asks the session to drain soon (posts to the io thread). Called with the lock held,
        // at most once per drain: it must not call back into this CallState.
        std::function<void()> wake;
        // True on the io thread, where producers must never block.
        std::function<bool()> on_io_thread;
    };

    CallState(bool more, std::size_t max_buffered_bytes, std::size_t max_message_bytes,
              Hooks hooks);

    // ---- producer side (any thread) ----
    // Serialises and queues a reply. block: wait for buffer space (never on the io thread).
    SendResult push_reply(const nlohmann::json& parameters, bool continues, bool block);
    // The same for parameters already serialised as JSON text (checked like the DOM is).
    SendResult push_reply_text(std::string_view parameters, bool continues, bool block);
    SendResult push_error(const Error& error);
    // The last Responder copy went away: fail the call if it never got a final reply.
    void abandon();
    bool is_open() const;
    bool more() const { return more_; }
    std::size_t buffered_bytes() const;
    void on_close(std::function<void()> fn);

    // ---- session side (io thread) ----
    struct Drained {
        std::vector<std::string> frames;
        bool finished = false;  // the final frame is among `frames` (or was drained earlier)
    };
    Drained drain();
    void release(std::size_t bytes);
    // The client is gone or the server stops: wake producers, run on_close callbacks.
    void close();

  private:
    // more() on a call without "more": fails the call with Internal.
    SendResult refuse_streaming();
    // Queues an encoded reply frame, or sends the encoder's error instead (final).
    SendResult push_frame(Result<std::string> frame, bool continues, bool block);
    // Queues a frame under the lock; returns Closed/AlreadyFinished when it cannot.
    SendResult enqueue_locked(std::unique_lock<std::mutex>& lock, std::string frame, bool final,
                              bool block);

    const bool more_;
    const std::size_t max_buffered_;  // bytes queued or being written, per call
    const std::size_t max_message_;   // bytes per reply, as the client's cap
    Hooks hooks_;

    mutable std::mutex mutex_;
    std::condition_variable space_;   // signalled by release() and close()
    std::deque<std::string> outbox_;  // guarded by mutex_
    std::size_t buffered_ = 0;        // guarded: bytes pushed and not yet released
    bool finished_ = false;           // guarded: the final frame was pushed
    bool closed_ = false;             // guarded: no more sends are accepted
    bool wake_pending_ = false;       // guarded: a drain is already requested
    std::vector<std::function<void()>> close_callbacks_;  // guarded
};

}  // namespace wsindex::ipc::detail
