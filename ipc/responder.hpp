// Responder: the handle a method handler answers through — from any thread, once or streamed.
//
// A handler gets a Responder with its Call. It may answer right away on the io thread, or hand
// the Responder to another thread (a scan, a database query) and answer from there; the server
// never waits for it. Copies share one call. The call ends with the first reply() or fail();
// more() sends a reply with "continues": true and is only allowed when the caller asked for
// "more". Replies are serialised on the calling thread (JSON work stays off the io thread),
// queued per call in order, and written by the io thread.
//
// Backpressure: each call may have at most ServerOptions::max_buffered_reply_bytes queued and
// not yet written to the socket. more() called off the io thread blocks while that budget is
// used up, until the client reads (or goes away); try_more() returns WouldBlock instead. On the
// io thread nothing ever blocks (a handler there must only send small answers).
//
// The client going away (or a write timeout, or the server stopping) closes the call: every
// send returns Closed, is_open() turns false, and on_close callbacks run, so producers can stop.
// If every copy of a Responder is dropped without a final reply, the caller gets
// wsindex.Internal ("handler finished without replying") rather than waiting forever.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "ipc/error.hpp"

namespace wsindex::ipc {

namespace detail {
class CallState;
}

enum class SendResult {
    Sent,             // queued for writing, in order
    Closed,           // the client is gone or the server is stopping: stop producing
    AlreadyFinished,  // the call already got its final reply (a handler bug)
    WouldBlock,       // try_more only: the buffer is full, retry later
    NotStreaming,     // more() on a call without "more": the call was failed with Internal
    TooLarge,         // the reply exceeded the message cap: sent MessageTooLarge instead (final)
    EncodeFailed,     // a string in the reply was not valid UTF-8 (use encode_bytes): sent
                      // Internal instead (final)
};

class Responder {
  public:
    // A detached responder: every send returns Closed. Useful as a placeholder.
    Responder() = default;
    explicit Responder(std::shared_ptr<detail::CallState> state);

    // The final reply. Any thread.
    SendResult reply(const nlohmann::json& parameters);
    // A streamed reply ("continues": true). Any thread; blocks off the io thread while the
    // call's buffer is full (see above). Requires the call to have "more".
    SendResult more(const nlohmann::json& parameters);
    // Like more(), but never blocks: WouldBlock when the buffer is full.
    SendResult try_more(const nlohmann::json& parameters);
    // reply / more / try_more for parameters already serialised: `parameters` is the text of
    // one JSON object (e.g. FindReplyWriter::take()). Checked as the DOM is (valid UTF-8, the
    // message cap), with the same results; nothing is parsed or re-serialised.
    SendResult reply_text(std::string_view parameters);
    SendResult more_text(std::string_view parameters);
    SendResult try_more_text(std::string_view parameters);
    // The final reply as an error. Any thread.
    SendResult fail(const Error& error);

    // False once the call is finished, or closed because the client went away. Any thread.
    [[nodiscard]] bool is_open() const;
    // True when the caller sent "more": true (the handler may stream).
    [[nodiscard]] bool streaming() const;
    // Bytes queued and not yet written to the client.
    [[nodiscard]] std::size_t buffered_bytes() const;
    // Runs `fn` once when the call is closed before finishing (client gone, server stopping);
    // on the io thread, or right away on the calling thread if that already happened. Keep it
    // short: it must not block (set a flag, notify a condition variable).
    void on_close(std::function<void()> fn);

  private:
    struct Token;
    std::shared_ptr<Token> token_;
};

}  // namespace wsindex::ipc
