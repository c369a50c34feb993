// CallState: ordered, bounded, cancellable reply queue of one call.
#include "ipc/call_state.hpp"

#include <utility>

#include "ipc/protocol.hpp"

namespace wsindex::ipc::detail {

CallState::CallState(bool more, std::size_t max_buffered_bytes, std::size_t max_message_bytes,
                     Hooks hooks)
    : more_(more),
      max_buffered_(max_buffered_bytes),
      max_message_(max_message_bytes),
      hooks_(std::move(hooks)) {}

SendResult CallState::enqueue_locked(std::unique_lock<std::mutex>& lock, std::string frame,
                                     bool final, bool block) {
    if (closed_) return SendResult::Closed;
    if (finished_) return SendResult::AlreadyFinished;
    const std::size_t size = frame.size();
    // An empty buffer always accepts one frame, however large, so a frame bigger than the
    // budget cannot wait forever. Final replies and errors never wait: they end the call.
    const auto has_room = [&] { return buffered_ == 0 || buffered_ + size <= max_buffered_; };
    if (!final && !has_room()) {
        const bool may_block = block && !(hooks_.on_io_thread && hooks_.on_io_thread());
        if (!may_block) {
            if (!block) return SendResult::WouldBlock;
            // On the io thread: the session cannot drain while we wait, so queue anyway.
        } else {
            space_.wait(lock, [&] { return closed_ || has_room(); });
            if (closed_) return SendResult::Closed;
        }
    }
    outbox_.push_back(std::move(frame));
    buffered_ += size;
    if (final) finished_ = true;
    if (!wake_pending_) {
        wake_pending_ = true;
        if (hooks_.wake) hooks_.wake();
    }
    return SendResult::Sent;
}

SendResult CallState::refuse_streaming() {
    push_error(make_error(ErrorKind::Internal,
                          "the method tried to stream replies to a call without \"more\""));
    return SendResult::NotStreaming;
}

SendResult CallState::push_reply(const nlohmann::json& parameters, bool continues, bool block) {
    if (continues && !more_) return refuse_streaming();
    Limits limits;
    limits.max_message_bytes = max_message_;
    return push_frame(encode_reply(Reply{parameters, continues}, limits), continues, block);
}

SendResult CallState::push_reply_text(std::string_view parameters, bool continues, bool block) {
    if (continues && !more_) return refuse_streaming();
    Limits limits;
    limits.max_message_bytes = max_message_;
    return push_frame(encode_reply_text(parameters, continues, limits), continues, block);
}

SendResult CallState::push_frame(Result<std::string> frame, bool continues, bool block) {
    if (!frame) {
        const Error& error = frame.error();
        push_error(error);
        return error.kind == ErrorKind::MessageTooLarge ? SendResult::TooLarge
                                                        : SendResult::EncodeFailed;
    }
    std::unique_lock lock(mutex_);
    return enqueue_locked(lock, std::move(frame.value()), !continues, block);
}

SendResult CallState::push_error(const Error& error) {
    std::string frame = encode_error(error);
    std::unique_lock lock(mutex_);
    return enqueue_locked(lock, std::move(frame), true, false);
}

void CallState::abandon() {
    {
        std::lock_guard lock(mutex_);
        if (closed_ || finished_) return;
    }
    push_error(make_error(ErrorKind::Internal, "the method handler finished without replying"));
}

bool CallState::is_open() const {
    std::lock_guard lock(mutex_);
    return !closed_ && !finished_;
}

std::size_t CallState::buffered_bytes() const {
    std::lock_guard lock(mutex_);
    return buffered_;
}

void CallState::on_close(std::function<void()> fn) {
    {
        std::lock_guard lock(mutex_);
        if (!closed_) {
            close_callbacks_.push_back(std::move(fn));
            return;
        }
    }
    fn();  // already closed: run now, outside the lock
}

CallState::Drained CallState::drain() {
    Drained out;
    std::lock_guard lock(mutex_);
    wake_pending_ = false;
    out.frames.reserve(outbox_.size());
    for (auto& frame : outbox_) out.frames.push_back(std::move(frame));
    outbox_.clear();
    out.finished = finished_;
    return out;
}

void CallState::release(std::size_t bytes) {
    {
        std::lock_guard lock(mutex_);
        buffered_ = bytes > buffered_ ? 0 : buffered_ - bytes;
    }
    space_.notify_all();
}

void CallState::close() {
    std::vector<std::function<void()>> callbacks;
    {
        std::lock_guard lock(mutex_);
        if (closed_) return;
        closed_ = true;
        outbox_.clear();
        // Callbacks matter only for calls cut short; a finished call has no producer left.
        if (!finished_) callbacks.swap(close_callbacks_);
        close_callbacks_.clear();
    }
    space_.notify_all();
    for (auto& fn : callbacks) fn();
}

}  // namespace wsindex::ipc::detail
